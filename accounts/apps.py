from django.apps import AppConfig
from django.db.models.signals import post_migrate, pre_save


class AccountsConfig(AppConfig):
    name = "accounts"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model

        from accounts.roles import instructors_group_sync
        from accounts.signals import revoke_api_tokens_on_password_change

        # After every migrate, so new content models are granted to instructors at once.
        post_migrate.connect(lambda **kwargs: instructors_group_sync(), weak=False)
        pre_save.connect(
            revoke_api_tokens_on_password_change,
            sender=get_user_model(),
            dispatch_uid="accounts.revoke_api_tokens_on_password_change",
        )
