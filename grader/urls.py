from django.urls import path

app_name = "grader"
urlpatterns: list = []
