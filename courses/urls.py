from django.urls import path

from courses import views

app_name = "courses"
urlpatterns = [
    path("courses/", views.course_list, name="course-list"),
    path("courses/join/<str:token>/", views.course_join, name="course-join"),
    path("courses/<slug:slug>/", views.course_detail, name="course-detail"),
    path(
        "courses/<slug:slug>/assignments/<int:pk>/",
        views.assignment_detail,
        name="assignment-detail",
    ),
]
