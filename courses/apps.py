from django.apps import AppConfig


class CoursesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "courses"
    verbose_name = "Courses"

    def ready(self) -> None:
        # The receivers that turn a stored verdict or answer into score_changed.
        from courses import receivers  # noqa: F401
