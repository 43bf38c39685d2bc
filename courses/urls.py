from django.urls import path

from courses import views

app_name = "courses"
urlpatterns = [
    path("courses/", views.course_list, name="course-list"),
    path("courses/join/<str:token>/", views.course_join, name="course-join"),
    path("courses/<slug:slug>/", views.course_detail, name="course-detail"),
    path("courses/<slug:slug>/gradebook/", views.gradebook, name="gradebook"),
    path("courses/<slug:slug>/gradebook.csv", views.gradebook_csv, name="gradebook-csv"),
    path("courses/<slug:slug>/members/", views.members, name="members"),
    path(
        "courses/<slug:slug>/assignments/<int:pk>/",
        views.assignment_detail,
        name="assignment-detail",
    ),
    path(
        "courses/<slug:slug>/assignments/<int:pk>/work/<int:sid>/",
        views.submission_detail,
        name="work-detail",
    ),
    path(
        "courses/<slug:slug>/assignments/<int:pk>/extensions/",
        views.extensions,
        name="extensions",
    ),
    path(
        "courses/<slug:slug>/assignments/<int:pk>/extensions/<int:eid>/revoke/",
        views.extension_revoke,
        name="extension-revoke",
    ),
    path(
        "courses/<slug:slug>/assignments/<int:pk>/overrides/<int:user_id>/",
        views.override,
        name="override",
    ),
    path(
        "courses/<slug:slug>/assignments/<int:pk>/similarity/",
        views.similarity,
        name="similarity",
    ),
]
