from django.urls import path

from grader.views import exercises as views

app_name = "grader"
urlpatterns = [
    path("exercises/", views.exercise_list, name="exercise-list"),
    path("exercises/<slug:slug>/", views.exercise_detail, name="exercise-detail"),
    path("misconceptions/", views.misconception_list, name="misconception-list"),
]
