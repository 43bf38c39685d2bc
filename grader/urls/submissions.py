from django.urls import include, path
from rest_framework.routers import SimpleRouter

from grader.api import ExerciseViewSet, SubmissionViewSet
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
    path("staff/exercises/<slug:slug>/regrade/", views.regrade, name="regrade"),
    path("staff/misconceptions/", views.misconceptions, name="misconceptions"),
]
# The API routes live outside the "submissions" namespace so the router's names stay plain.
api_urlpatterns = [path("", include(router.urls))]
