from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from grader.urls.submissions import api_urlpatterns
from quizsite import views

admin.site.site_header = "Attention quiz: authoring"
admin.site.site_title = "Attention quiz admin"

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/token/", views.TokenCreateApi.as_view(), name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file: the CSP allows no inline one.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("", include("questions.urls")),
    path("", include("grader.urls.exercises")),
    path("", include("grader.urls.submissions")),
    path("", include(api_urlpatterns)),
]

# A failure inside the API answers JSON, as the rest of the API does; pages keep 500.html.
handler500 = "quizsite.views.server_error"
handler404 = "quizsite.views.page_not_found"
handler400 = "quizsite.views.bad_request"
handler403 = "quizsite.views.permission_denied"
