from django.urls import path

app_name = "questions"
urlpatterns: list = []
