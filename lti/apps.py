from django.apps import AppConfig


class LtiConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "lti"
    verbose_name = "LTI 1.3"

    def ready(self) -> None:
        # A changed score that counts becomes a passback task for the platform's gradebook.
        from lti import receivers  # noqa: F401
