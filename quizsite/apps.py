from django.apps import AppConfig
from django.db.models.signals import post_migrate


class QuizsiteConfig(AppConfig):
    name = "quizsite"

    def ready(self) -> None:
        from quizsite.roles import instructors_group_sync

        # After every migrate, so new content models are granted to instructors at once.
        post_migrate.connect(lambda **kwargs: instructors_group_sync(), weak=False)
