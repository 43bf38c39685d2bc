"""API authentication: django-rest-knox's tokens (stored as a hash, with an expiry), each read
with its user in one statement."""

from __future__ import annotations

import re
from typing import Any

from django.utils import timezone
from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from knox import auth
from knox.crypto import hash_token
from knox.models import get_token_model
from knox.settings import knox_settings
from knox.signals import token_expired
from rest_framework import exceptions

MSG_INVALID_TOKEN = "Invalid token."  # noqa: S105 (a message, not a secret)
_HEX = re.compile(r"[0-9a-f]+")


class TokenAuthentication(auth.TokenAuthentication):
    """knox's scheme, header and messages (``Authorization: Token <token>``), with its lookup
    by the token's hash: the digest is the table's primary key, so one indexed read finds the
    token and its user. knox reads every row sharing the token's first characters, then every
    other token of the user at each request to delete expired ones; expired tokens are
    deleted here when presented, and when their owner gets a new one (accounts.services)."""

    def authenticate_credentials(self, token: bytes) -> tuple[Any, Any]:
        try:
            key = token.decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed(MSG_INVALID_TOKEN) from None
        # Only the shape knox issues reaches the database (no NUL, which PostgreSQL refuses).
        prefix = knox_settings.TOKEN_PREFIX
        body = key[len(prefix) :]
        if (
            not key.startswith(prefix)
            or len(body) != knox_settings.AUTH_TOKEN_CHARACTER_LENGTH
            or not _HEX.fullmatch(body)
        ):
            raise exceptions.AuthenticationFailed(MSG_INVALID_TOKEN)
        model = get_token_model()
        try:
            auth_token = model.objects.select_related("user").get(pk=hash_token(key))
        except model.DoesNotExist:
            raise exceptions.AuthenticationFailed(MSG_INVALID_TOKEN) from None
        if auth_token.expiry is not None and auth_token.expiry <= timezone.now():
            username = auth_token.user.get_username()
            auth_token.delete()
            token_expired.send(sender=self.__class__, username=username, source="auth_token")
            raise exceptions.AuthenticationFailed(MSG_INVALID_TOKEN)
        return self.validate_user(auth_token)


class TokenScheme(KnoxTokenScheme):
    """The OpenAPI security scheme of the class above (drf-spectacular's knox extension
    matches knox's own class only)."""

    target_class = "accounts.authentication.TokenAuthentication"
    name = "tokenAuth"
