from django.urls import path

from lti import views

app_name = "lti"

urlpatterns = [
    path("lti/jwks/", views.jwks, name="jwks"),
    path("lti/login/<uuid:registration_uuid>/", views.oidc_login, name="login"),
    path("lti/launch/", views.launch, name="launch"),
    path("lti/register/", views.register, name="register"),
    path("lti/pick/<str:token>/", views.pick, name="pick"),
    path("lti/deep-link/<str:token>/", views.deep_link, name="deep-link"),
    path("lti/courses/<slug:slug>/sync/", views.course_sync, name="course-sync"),
    path("lti/continue/<str:token>/", views.continue_in_window, name="continue"),
]
