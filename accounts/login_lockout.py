"""Failed logins: django-axes' lockout per account, and a limit per client address.

Every login path (the login form, the admin, POST /api/token/) goes through authenticate(),
whose first backend asks this handler whether the caller may try at all. An account is locked
after AXES_FAILURE_LIMIT failures from one address (axes' own rule). An address is refused
once LOGIN_FAILURES_PER_ADDRESS failures from it, whatever the usernames, fall within the
cool-off (AXES_COOLOFF_HOURS): password spraying tries a few passwords on many accounts and
never meets the per-account limit.

Why not axes' own "ip_address" lockout parameter: axes compares the largest count of all its
parameters against one AXES_FAILURE_LIMIT (a callable limit is given the request, not the
parameter), so the address would share the account's limit of 5, and a whole class behind one
NAT address would be locked out by five typos. And a successful login resets every record that
matches any parameter, so one student logging in would wipe the address's count, and with it
the other accounts' counts from that address. Why not a counter in the cache: lockouts are
counted in the database so they hold while Redis is down (see AXES_HANDLER in settings); the
address's count is read from the same rows axes writes, so it holds too and needs nothing more.
"""

from __future__ import annotations

from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from accounts.selectors.login_failures import login_failures_from_address

MSG_LOCKED_OUT = "Too many failed logins for this account from your network. Try again later."
MSG_ADDRESS_LOCKED_OUT = (
    "Too many failed logins from your network. Logins from it are paused for a few minutes."
)

# Set on a request refused for its address (not its account), to say so.
_ADDRESS_LIMITED = "login_address_limited"


def address_limited(request: Any) -> bool:
    """Whether this login was refused because of its client address's failures."""
    return bool(getattr(request, _ADDRESS_LIMITED, False))


def _address_over_limit(request: Any) -> bool:
    ip_address = getattr(request, "axes_ip_address", None)
    if not ip_address:  # no address to count against (axes_client_ip found none)
        return False
    failures = login_failures_from_address(
        ip_address=ip_address, since=get_cool_off_threshold(request)
    )
    return failures >= settings.LOGIN_FAILURES_PER_ADDRESS


class LoginLockoutHandler(AxesDatabaseHandler):
    """axes' database handler, plus the limit per client address."""

    def is_locked(self, request: Any, credentials: dict[str, Any] | None = None) -> bool:
        if super().is_locked(request, credentials):
            return True
        if _address_over_limit(request):
            setattr(request, _ADDRESS_LIMITED, True)
            return True
        return False

    def user_login_failed(
        self, sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any
    ) -> None:
        if request is not None and address_limited(request):
            # Refused before any password was checked: not a guess, so not counted. Counting
            # it would keep the address locked for as long as anyone behind it keeps trying,
            # so a class behind one NAT could be kept out for good.
            request.axes_locked_out = True
            request.axes_credentials = credentials
            return
        super().user_login_failed(sender, credentials, request, **kwargs)
        if request is not None and not request.axes_locked_out and _address_over_limit(request):
            # This failure reached the address's limit: say so now, as axes does for an account.
            setattr(request, _ADDRESS_LIMITED, True)
            request.axes_locked_out = True
            request.axes_credentials = credentials


def lockout_response(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: the lockout page of the login form and the admin, saying whether
    the account or the whole address is paused."""
    message = MSG_ADDRESS_LOCKED_OUT if address_limited(request) else MSG_LOCKED_OUT
    return render(
        request,
        settings.AXES_LOCKOUT_TEMPLATE,
        {"message": message},
        status=settings.AXES_HTTP_RESPONSE_CODE,
    )
