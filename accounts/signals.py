"""Revoke a user's API tokens whenever their password changes, whatever the path."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from accounts.services.api_tokens import api_tokens_revoke_all


def revoke_api_tokens_on_password_change(
    sender: Any, instance: Any, raw: bool = False, update_fields: Any = None, **_: Any
) -> None:
    """pre_save of the user model: the stored hash against the one about to be saved.

    At the save, not in each view: the password change form, the reset confirm, the admin,
    ``manage.py changepassword`` and any ``set_password`` all end in this save.
    """
    if raw or instance.pk is None:
        return
    if update_fields is not None and "password" not in update_fields:
        return  # e.g. the last_login update of every login: nothing to compare
    # Django's own rehash at login (a stronger hasher, the same password) saves the password
    # field alone, usable, with no new raw password pending: not a change of password.
    rehash = (
        update_fields is not None
        and set(update_fields) == {"password"}
        and getattr(instance, "_password", None) is None
        and instance.has_usable_password()
    )
    if rehash:
        return
    stored = (
        get_user_model().objects.filter(pk=instance.pk).values_list("password", flat=True).first()
    )
    if stored is not None and stored != instance.password:
        api_tokens_revoke_all(user_id=instance.pk)
