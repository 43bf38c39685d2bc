"""DRF throttles on the shared, atomic counters of common.ratelimit."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from common.ratelimit import client_ip, rate_limit_hit


class _SharedRateThrottle(BaseThrottle):
    scope = ""

    def __init__(self) -> None:
        self._wait: float | None = None

    def rate(self) -> str | None:
        return settings.THROTTLE_RATES.get(self.scope)

    def ident(self, request: Request) -> str | None:
        raise NotImplementedError

    def allow_request(self, request: Request, view: Any) -> bool:
        ident = self.ident(request)
        if ident is None:
            return True
        self._wait = rate_limit_hit(scope=self.scope, ident=ident, rate=self.rate())
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


class AnonRateThrottle(_SharedRateThrottle):
    """Anonymous callers, per client address (see NUM_PROXIES)."""

    scope = "anon"

    def ident(self, request: Request) -> str | None:
        return None if request.user and request.user.is_authenticated else client_ip(request)


class UserRateThrottle(_SharedRateThrottle):
    """Signed-in callers, per user."""

    scope = "user"

    def ident(self, request: Request) -> str | None:
        return str(request.user.pk) if request.user and request.user.is_authenticated else None


class TokenRateThrottle(_SharedRateThrottle):
    """Token creation (a password check), per client address, on top of the lockout."""

    scope = "token"

    def ident(self, request: Request) -> str | None:
        return client_ip(request)
