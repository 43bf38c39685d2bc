from django.urls import path

from grader.views import exercises as views
from grader.views import trials

app_name = "grader"
urlpatterns = [
    path("exercises/", views.exercise_list, name="exercise-list"),
    path("exercises/<slug:slug>/", views.exercise_detail, name="exercise-detail"),
    path("misconceptions/", views.misconception_list, name="misconception-list"),
    # Run before Submit (grader.views.trials).
    path("exercises/<slug:slug>/run/", trials.run, name="run"),
    path("runs/<int:pk>/", trials.run_detail, name="run-detail"),
    path("runs/<int:pk>/status/", trials.run_status, name="run-status"),
]
