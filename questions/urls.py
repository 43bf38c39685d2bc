from django.urls import path

from questions import api, views

app_name = "questions"
urlpatterns = [
    path("questions/", views.question_list, name="list"),
    path("questions/<slug:slug>/", views.question_detail, name="detail"),
    path("questions/<slug:slug>/answer/", views.question_answer, name="answer"),
    path(
        "questions/<slug:slug>/follow-ups/<int:pk>/answer/",
        views.follow_up_answer,
        name="follow-up-answer",
    ),
    path("questions/<slug:slug>/preview/", views.question_preview, name="preview"),
    path("explainer/", views.explainer, name="explainer"),
    # API (schema and docs are routed by quizsite/urls.py)
    path("api/questions/", api.QuestionListApi.as_view(), name="api-question-list"),
    path("api/questions/<slug:slug>/", api.QuestionDetailApi.as_view(), name="api-question-detail"),
    path("api/attempts/", api.AttemptListCreateApi.as_view(), name="api-attempt-list"),
    path("api/attempts/<int:pk>/", api.AttemptDetailApi.as_view(), name="api-attempt-detail"),
]
