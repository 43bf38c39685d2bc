from django.apps import AppConfig


class QuestionsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "questions"
    verbose_name = "Question bank"

    def ready(self) -> None:
        from questions import signals  # noqa: F401  (connects the login hand-over)
