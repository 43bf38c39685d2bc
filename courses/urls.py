from django.urls import path, re_path

from courses import api, views

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

# The API (courses.api): ids in paths are at most 18 digits (api.ID_PATTERN).
_ID = api.ID_PATTERN
api_urlpatterns = [
    path("api/courses/", api.CourseListApi.as_view(), name="course-api-list"),
    path("api/courses/<slug:slug>/", api.CourseDetailApi.as_view(), name="course-api-detail"),
    path(
        "api/courses/<slug:slug>/assignments/",
        api.AssignmentListApi.as_view(),
        name="assignment-api-list",
    ),
    re_path(
        rf"^api/courses/(?P<slug>[-a-zA-Z0-9_]+)/assignments/(?P<pk>{_ID})/$",
        api.AssignmentDetailApi.as_view(),
        name="assignment-api-detail",
    ),
    path("api/courses/<slug:slug>/gradebook/", api.GradebookApi.as_view(), name="gradebook-api"),
    path(
        "api/courses/<slug:slug>/extensions/",
        api.ExtensionListApi.as_view(),
        name="extension-api-list",
    ),
    re_path(
        rf"^api/courses/(?P<slug>[-a-zA-Z0-9_]+)/extensions/(?P<pk>{_ID})/$",
        api.ExtensionDetailApi.as_view(),
        name="extension-api-detail",
    ),
    path(
        "api/courses/<slug:slug>/overrides/",
        api.OverrideListApi.as_view(),
        name="override-api-list",
    ),
    re_path(
        rf"^api/courses/(?P<slug>[-a-zA-Z0-9_]+)/overrides/(?P<pk>{_ID})/$",
        api.OverrideDetailApi.as_view(),
        name="override-api-detail",
    ),
]
