"""accounts.login_lockout: password spraying from one address is stopped on every login path;
other addresses, and the per-account lockout, keep working as before."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.login_lockout import MSG_ADDRESS_LOCKED_OUT, MSG_LOCKED_OUT
from accounts.selectors.login_failures import login_failures_from_address
from accounts.services.api_tokens import MSG_BAD_CREDENTIALS
from tests.factories import user_create

pytestmark = pytest.mark.django_db

SPRAYER = "203.0.113.5"
NEIGHBOUR = "198.51.100.7"
USERNAMES = [f"student{i:02d}" for i in range(40)]
# Each path: its URL, the client class, the status of a wrong password and of a good login.
PATHS = {
    "form": ("/accounts/login/", Client, 200, 302),
    "admin": ("/admin/login/", Client, 200, 302),
    "api": ("/api/token/", APIClient, 401, 200),
}


def _password(username: str) -> str:
    return f"pw-{username}-123"


@pytest.fixture
def accounts() -> list[str]:
    for name in USERNAMES:
        # Staff, so that a good login on the admin's form is a login there too.
        user_create(username=name, password=_password(name), is_staff=True)
    return USERNAMES


def _spray(path: str, address: str) -> list[int]:
    """40 usernames, 2 wrong passwords each, from one address: the audit's scenario."""
    url, client_class, _, _ = PATHS[path]
    client = client_class(REMOTE_ADDR=address)
    return [
        client.post(url, {"username": name, "password": f"guess-{n}"}).status_code
        for n in range(2)
        for name in USERNAMES
    ]


def _login(path: str, address: str, username: str) -> tuple[int, str]:
    url, client_class, _, _ = PATHS[path]
    response = client_class(REMOTE_ADDR=address).post(
        url, {"username": username, "password": _password(username)}
    )
    return response.status_code, response.content.decode()


@pytest.mark.usefixtures("accounts")
@pytest.mark.parametrize("path", PATHS)
def test_spraying_from_one_address_is_stopped_at_the_limit(path: str) -> None:
    limit = django_settings.LOGIN_FAILURES_PER_ADDRESS
    assert 2 * len(USERNAMES) > limit > django_settings.AXES_FAILURE_LIMIT
    _, _, failed, succeeded = PATHS[path]
    codes = _spray(path, SPRAYER)
    # The failure that reaches the limit is answered as a lockout, as axes does for an account.
    assert codes == [failed] * (limit - 1) + [429] * (len(codes) - limit + 1)
    # Refused attempts check no password, so they are not counted against the address...
    assert login_failures_from_address(
        ip_address=SPRAYER, since=timezone.now() - timedelta(hours=1)
    ) == (limit)
    # ...and while it is paused, a good password from it is refused too, saying why.
    status, body = _login(path, SPRAYER, "student39")
    assert status == 429 and MSG_ADDRESS_LOCKED_OUT in body
    # Another address is not affected, for the same accounts.
    assert _login(path, NEIGHBOUR, "student39")[0] == succeeded


@pytest.mark.usefixtures("accounts")
def test_the_api_says_the_address_is_paused() -> None:
    _spray("api", SPRAYER)
    response = APIClient(REMOTE_ADDR=SPRAYER).post(
        "/api/token/", {"username": "student00", "password": _password("student00")}
    )
    assert response.status_code == 429
    assert response.json() == {"detail": MSG_ADDRESS_LOCKED_OUT}


@pytest.mark.usefixtures("accounts")
def test_the_pause_ends_when_the_failures_leave_the_cool_off() -> None:
    _spray("form", SPRAYER)
    assert _login("form", SPRAYER, "student00")[0] == 429
    cool_off = timedelta(hours=django_settings.AXES_COOLOFF_TIME)
    AccessAttempt.objects.update(attempt_time=timezone.now() - cool_off - timedelta(seconds=1))
    assert _login("form", SPRAYER, "student00")[0] == 302


@pytest.mark.usefixtures("accounts")
def test_below_the_limit_the_address_stays_open_and_a_login_does_not_reset_it(settings) -> None:
    settings.LOGIN_FAILURES_PER_ADDRESS = 10
    client = Client(REMOTE_ADDR=SPRAYER)
    for name in USERNAMES[:9]:
        client.post("/accounts/login/", {"username": name, "password": "wrong"})
    assert _login("form", SPRAYER, "student39")[0] == 302
    # axes resets the records a login matches: only that account's, not its neighbours'.
    client.post("/accounts/login/", {"username": "student10", "password": "wrong"})
    assert _login("form", SPRAYER, "student38")[0] == 429


@pytest.mark.usefixtures("accounts")
@pytest.mark.parametrize("path", PATHS)
def test_the_per_account_lockout_still_holds(path: str) -> None:
    url, client_class, failed, _ = PATHS[path]
    client = client_class(REMOTE_ADDR=SPRAYER)
    limit = django_settings.AXES_FAILURE_LIMIT
    codes = [
        client.post(url, {"username": "student00", "password": "wrong"}).status_code
        for _ in range(limit)
    ]
    assert codes == [failed] * (limit - 1) + [429]
    status, body = _login(path, SPRAYER, "student00")
    assert status == 429 and MSG_LOCKED_OUT in body
    # The address is still open to the other accounts.
    assert _login(path, SPRAYER, "student01")[0] == PATHS[path][3]


def test_a_wrong_password_on_the_api_is_still_a_401() -> None:
    response = APIClient(REMOTE_ADDR=NEIGHBOUR).post(
        "/api/token/", {"username": "nobody", "password": "x"}
    )
    assert response.status_code == 401 and response.json() == {"detail": MSG_BAD_CREDENTIALS}
