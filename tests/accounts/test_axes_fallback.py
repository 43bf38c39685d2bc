"""Logins keep working, and keep locking out, while the shared cache (Redis) is down.

With the lockouts counted in the cache (axes' cache handler), every login path answered 500
while Redis was down, though the rate limits fail open. They are counted in the database now,
which every web process shares as it shares the cache.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

from accounts.login_lockout import MSG_LOCKED_OUT
from tests.factories import student_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def cache_down(settings) -> Iterator[None]:
    """The shared cache on a port where nothing listens (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.5},
        }
    }
    with pytest.raises(Exception):
        cache.get("probe")
    yield


def _user(username: str) -> None:
    student_create(username=username, password=f"pw-{username}-123")


def test_the_login_form_works_while_the_cache_is_down(cache_down: None) -> None:
    _user("ann")
    c = Client()
    response = c.post("/accounts/login/", {"username": "ann", "password": "pw-ann-123"})
    assert response.status_code == 302
    assert c.session["_auth_user_id"]


def test_lockouts_still_apply_while_the_cache_is_down(cache_down: None, settings) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    _user("ann")
    c = Client()
    codes = [
        c.post("/accounts/login/", {"username": "ann", "password": "wrong"}).status_code
        for _ in range(3)
    ]
    assert codes == [200, 200, 429]
    # Locked out even with the right password.
    response = c.post("/accounts/login/", {"username": "ann", "password": "pw-ann-123"})
    assert response.status_code == 429 and "_auth_user_id" not in c.session


def test_token_creation_works_and_locks_out_while_the_cache_is_down(
    cache_down: None, settings
) -> None:
    settings.AXES_FAILURE_LIMIT = 2
    _user("ann")
    _user("bob")
    c = APIClient()
    assert c.post("/api/token/", {"username": "bob", "password": "pw-bob-123"}).status_code == 200
    codes = [c.post("/api/token/", {"username": "ann", "password": "x"}).status_code for _ in "ab"]
    assert codes == [401, 429]
    locked = c.post("/api/token/", {"username": "ann", "password": "pw-ann-123"})
    assert locked.status_code == 429 and locked.json()["detail"] == MSG_LOCKED_OUT


def test_lockouts_are_kept_where_every_process_reads_them(settings) -> None:
    # The database, not a process's memory nor the cache: another process sees the same rows.
    from axes.models import AccessAttempt

    settings.AXES_FAILURE_LIMIT = 2
    _user("ann")
    Client().post("/accounts/login/", {"username": "ann", "password": "wrong"})
    assert AccessAttempt.objects.filter(username="ann").exists()


@pytest.mark.parametrize(
    ("meta", "expected"),
    [({"REMOTE_ADDR": "203.0.113.7"}, "203.0.113.7"), ({}, None), ({"REMOTE_ADDR": "x"}, None)],
)
def test_axes_is_given_an_address_or_none(meta: dict[str, str], expected: str | None) -> None:
    # Axes stores it in a GenericIPAddressField: PostgreSQL refused "unknown" there, so every
    # force_login (a request with no REMOTE_ADDR) failed on the lockout reset.
    from django.test import RequestFactory

    from common.ratelimit import axes_client_ip

    request = RequestFactory().get("/")
    request.META = meta
    assert axes_client_ip(request) == expected


@pytest.mark.django_db
def test_force_login_works_with_the_database_handler(client) -> None:  # type: ignore[no-untyped-def]
    user = student_create(username="forced", password="pw-forced-12345")
    client.force_login(user)
    assert client.get("/exercises/").status_code == 200
