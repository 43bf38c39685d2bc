from django.apps import AppConfig


class GraderConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "grader"
