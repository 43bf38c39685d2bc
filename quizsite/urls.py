from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from accounts import api, views
from courses.urls import api_urlpatterns as courses_api_urlpatterns
from grader.urls.submissions import api_urlpatterns
from grader.views.trials import TrialRunCreateApi, TrialRunDetailApi
from quizsite import views as site_views

admin.site.site_header = f"{settings.PRODUCT_NAME}: authoring"
admin.site.site_title = settings.PRODUCT_NAME
admin.site.index_title = "Questions, exercises and submissions"
# The staff pages (submissions, misconceptions, grades) linked from the admin's index.
admin.site.index_template = "admin/staff_index.html"

urlpatterns = [
    path("", site_views.home, name="home"),
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Password reset: Django's views and tokens, the request limited per client (views.py).
    path("accounts/password_reset/", views.PasswordResetView.as_view(), name="password_reset"),
    path(
        "accounts/password_reset/done/",
        auth_views.PasswordResetDoneView.as_view(
            extra_context={"timeout_minutes": settings.PASSWORD_RESET_TIMEOUT // 60}
        ),
        name="password_reset_done",
    ),
    path(
        "accounts/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    # Browsers ask for /favicon.ico whatever the page says; the icon is an SVG.
    path("favicon.ico", site_views.FaviconView.as_view(), name="favicon"),
    path("admin/", admin.site.urls),
    path("api/token/", api.TokenCreateApi.as_view(), name="api-token"),
    # The owner's tokens (listed by prefix, never the token), and revoking them.
    path("api/tokens/", api.TokenListApi.as_view(), name="api-tokens"),
    path("api/tokens/revoke-all/", api.TokenRevokeAllApi.as_view(), name="api-tokens-revoke-all"),
    path("api/tokens/<slug:prefix>/", api.TokenRevokeApi.as_view(), name="api-token-revoke"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file: the CSP allows no inline one.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("", include("questions.urls")),
    path("", include("grader.urls.exercises")),
    path("", include("grader.urls.submissions")),
    path("", include("courses.urls")),
    path("", include("lti.urls")),
    # Run before Submit (grader.views.trials), beside the router's exercises and submissions.
    path(
        "api/exercises/<slug:slug>/run/", TrialRunCreateApi.as_view(), name="trial-run-api-create"
    ),
    path("api/runs/<int:pk>/", TrialRunDetailApi.as_view(), name="trial-run-api-detail"),
    path("", include(api_urlpatterns)),
    path("", include(courses_api_urlpatterns)),
]

# A failure inside the API answers JSON, as the rest of the API does; pages keep 500.html.
handler500 = "quizsite.views.server_error"
handler404 = "quizsite.views.page_not_found"
handler400 = "quizsite.views.bad_request"
handler403 = "quizsite.views.permission_denied"
