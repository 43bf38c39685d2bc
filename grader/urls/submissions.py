from django.urls import include, path
from rest_framework.routers import SimpleRouter

from grader.api import ExerciseViewSet, GradesCsvApi, SubmissionViewSet
from grader.views import staff
from grader.views import submissions as views

router = SimpleRouter()
router.register("api/submissions", SubmissionViewSet, basename="submission-api")
router.register("api/exercises", ExerciseViewSet, basename="exercise-api")

app_name = "submissions"
urlpatterns = [
    path("exercises/<slug:slug>/submit/", views.submit, name="submit"),
    path("exercises/<slug:slug>/history/", views.history, name="history"),
    path("submissions/<int:pk>/", views.detail, name="detail"),
    path("submissions/<int:pk>/status/", views.status, name="status"),
    path("staff/submissions/", views.staff_list, name="staff-list"),
    path("staff/exercises/<slug:slug>/regrade/", staff.regrade, name="regrade"),
    path(
        "staff/exercises/<slug:slug>/regrade/confirm/",
        staff.regrade_confirm,
        name="regrade-confirm",
    ),
    path(
        "staff/exercises/<slug:slug>/regrade/progress/",
        staff.regrade_progress,
        name="regrade-progress",
    ),
    path("staff/misconceptions/", staff.misconceptions, name="misconceptions"),
    path("staff/grades.csv", staff.grades_download, name="grades-csv"),
    path("notices/<int:pk>/dismiss/", staff.notice_dismiss, name="notice-dismiss"),
    path("regrades/<int:pk>/", staff.regrade_details, name="regrade-details"),
]
# The API routes live outside the "submissions" namespace so the router's names stay plain.
api_urlpatterns = [
    path("api/grades.csv", GradesCsvApi.as_view(), name="grades-csv-api"),
    path("", include(router.urls)),
]
