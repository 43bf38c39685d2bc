"""A user's API tokens (django-rest-knox rows: a hash of each token, never the token)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Q, QuerySet
from django.utils import timezone
from knox.models import AuthToken

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


def api_token_list(*, user: AbstractBaseUser) -> QuerySet[AuthToken]:
    """The user's tokens that still work, newest first."""
    alive = Q(expiry__isnull=True) | Q(expiry__gt=timezone.now())
    return AuthToken.objects.filter(alive, user=user).order_by("-created")
