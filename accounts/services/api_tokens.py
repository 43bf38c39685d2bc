"""API tokens (django-rest-knox): issued for a username and password, listed and revoked by
their owner, all revoked when the password changes.

Only a hash of each token is stored (knox's ``digest``, SHA-512), with its first characters
(``token_key``) to tell the owner which one is which; the token itself is shown once, when it
is issued. Every token expires after ``API_TOKEN_TTL_HOURS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.contrib.auth import authenticate
from django.utils import timezone
from knox.models import AuthToken

from accounts.login_lockout import MSG_ADDRESS_LOCKED_OUT, MSG_LOCKED_OUT, address_limited

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

MSG_BAD_CREDENTIALS = "Unable to log in with the provided username and password."
MSG_TOKEN_NOT_FOUND = "You have no such token (it may have expired or been revoked)."  # noqa: S105


class ApiTokenError(Exception):
    """A token request refused, with a message for the caller and an HTTP status."""

    def __init__(self, message: str, *, status_code: int) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code


@dataclass(frozen=True)
class IssuedToken:
    token: str  # the secret: returned once, never stored
    prefix: str  # its first characters, stored to tell the owner's tokens apart
    created: datetime
    expiry: datetime | None


def api_token_login(*, request: Any, username: str, password: str) -> IssuedToken:
    """A new token for a username and password. authenticate() is where django-axes counts
    the failure and refuses a locked-out account or address, as on the login form."""
    user = authenticate(request=request, username=username, password=password)
    if user is None:
        if getattr(request, "axes_locked_out", False):
            message = MSG_ADDRESS_LOCKED_OUT if address_limited(request) else MSG_LOCKED_OUT
            raise ApiTokenError(message, status_code=429)
        raise ApiTokenError(MSG_BAD_CREDENTIALS, status_code=401)
    return api_token_issue(user=user)


def api_token_issue(*, user: AbstractBaseUser) -> IssuedToken:
    """A new token for ``user``, expiring after API_TOKEN_TTL_HOURS (knox's TOKEN_TTL)."""
    # Authentication deletes an expired token only when it is presented; the others go here.
    AuthToken.objects.filter(user=user, expiry__lte=timezone.now()).delete()
    instance, token = AuthToken.objects.create(user=user)
    return IssuedToken(
        token=token, prefix=instance.token_key, created=instance.created, expiry=instance.expiry
    )


def api_token_revoke(*, user: AbstractBaseUser, prefix: str) -> None:
    """Revoke the owner's token that starts with ``prefix``; another user's is not found."""
    deleted, _ = AuthToken.objects.filter(user=user, token_key=prefix).delete()
    if not deleted:
        raise ApiTokenError(MSG_TOKEN_NOT_FOUND, status_code=404)


def api_tokens_revoke_all(*, user_id: int) -> int:
    """Revoke every token of the user; how many there were."""
    deleted, _ = AuthToken.objects.filter(user_id=user_id).delete()
    return deleted
