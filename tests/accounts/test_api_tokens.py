"""API tokens (accounts.api, accounts.services.api_tokens, accounts.selectors.api_tokens,
accounts.signals): stored as a hash, expiring, listed and revoked by their owner, and all
revoked when the password changes, whatever the path."""

from __future__ import annotations

import importlib
from datetime import timedelta
from io import StringIO
from types import SimpleNamespace
from unittest import mock

import pytest
from django.contrib.auth.forms import PasswordChangeForm
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.contrib.auth.tokens import default_token_generator
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from knox.models import AuthToken
from rest_framework.test import APIClient

from accounts.selectors.api_tokens import api_token_list
from accounts.services.api_tokens import (
    MSG_TOKEN_NOT_FOUND,
    api_token_issue,
    api_tokens_revoke_all,
)
from tests.factories import user_create

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-new-passphrase-42"


def user(username: str, **fields):  # type: ignore[no-untyped-def]
    return user_create(username=username, password=f"pw-{username}-123", **fields)


def with_token(token: str) -> APIClient:
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return c


def works(token: str) -> bool:
    return with_token(token).get("/api/tokens/").status_code == 200


# --- issuing ------------------------------------------------------------------------------


def test_post_token_answers_the_token_once_and_stores_only_its_hash() -> None:
    user("ann")
    response = APIClient().post("/api/token/", {"username": "ann", "password": "pw-ann-123"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"token", "prefix", "created", "expiry"}
    token = body["token"]
    assert body["prefix"] == token[: len(body["prefix"])] and len(body["prefix"]) < len(token)
    row = AuthToken.objects.get()
    stored = [
        str(v) for v in AuthToken.objects.values_list(*[f.attname for f in row._meta.fields]).get()
    ]
    assert not any(token in v for v in stored)  # a hash and a prefix, never the token
    assert works(token)


def test_a_token_expires_after_the_configured_lifetime(settings) -> None:
    issued = api_token_issue(user=user("ann"))
    assert issued.expiry is not None
    lifetime = issued.expiry - issued.created
    assert abs(lifetime - timedelta(hours=settings.API_TOKEN_TTL_HOURS)) < timedelta(seconds=1)
    assert settings.API_TOKEN_TTL_HOURS == 720
    later = issued.expiry + timedelta(seconds=1)
    with mock.patch("django.utils.timezone.now", return_value=later):
        assert with_token(issued.token).get("/api/tokens/").status_code == 401
    assert not AuthToken.objects.exists()  # an expired token is deleted when presented


def test_a_new_token_clears_its_owners_expired_ones() -> None:
    ann = user("ann")
    old = api_token_issue(user=ann)
    AuthToken.objects.filter(token_key=old.prefix).update(expiry=timezone.now())
    api_token_issue(user=ann)
    assert list(AuthToken.objects.values_list("user__username", flat=True)) == ["ann"]


@pytest.mark.parametrize(
    "header",
    [
        b"Token " + b"\xff" * 64,
        b"Token " + b"0" * 63 + b"\x00",
        b"Token abc",
        b"Token " + b"g" * 64,
    ],
)
def test_a_malformed_token_is_401_not_500(header: bytes) -> None:
    response = APIClient().get("/api/tokens/", HTTP_AUTHORIZATION=header.decode("latin-1"))
    assert response.status_code == 401


# --- listing and revoking -----------------------------------------------------------------


def test_the_owner_lists_their_tokens_without_the_secret() -> None:
    ann = user("ann")
    first, second = api_token_issue(user=ann), api_token_issue(user=ann)
    api_token_issue(user=user("ben"))
    listed = with_token(second.token).get("/api/tokens/").json()
    assert [t["prefix"] for t in listed] == [second.prefix, first.prefix]
    assert [t["current"] for t in listed] == [True, False]
    assert all(set(t) == {"prefix", "created", "expiry", "current"} for t in listed)
    assert first.token not in str(listed) and second.token not in str(listed)


def test_the_list_leaves_out_expired_tokens() -> None:
    ann = user("ann")
    old, kept = api_token_issue(user=ann), api_token_issue(user=ann)
    AuthToken.objects.filter(token_key=old.prefix).update(expiry=timezone.now())
    assert [t.token_key for t in api_token_list(user=ann)] == [kept.prefix]


def test_the_owner_revokes_one_token() -> None:
    ann = user("ann")
    gone, kept = api_token_issue(user=ann), api_token_issue(user=ann)
    assert with_token(kept.token).delete(f"/api/tokens/{gone.prefix}/").status_code == 204
    assert not works(gone.token) and works(kept.token)


def test_nobody_revokes_anothers_token() -> None:
    theirs = api_token_issue(user=user("ben"))
    mine = api_token_issue(user=user("ann"))
    response = with_token(mine.token).delete(f"/api/tokens/{theirs.prefix}/")
    assert response.status_code == 404 and response.json() == {"detail": MSG_TOKEN_NOT_FOUND}
    assert works(theirs.token)


def test_the_owner_revokes_them_all_from_a_session_too() -> None:
    ann = user("ann")
    tokens = [api_token_issue(user=ann) for _ in range(2)]
    ben = api_token_issue(user=user("ben"))
    browser = APIClient()
    browser.force_login(ann)
    response = browser.post("/api/tokens/revoke-all/")
    assert response.status_code == 200 and response.json() == {"revoked": 2}
    assert not any(works(t.token) for t in tokens) and works(ben.token)


def test_anonymous_callers_get_no_list() -> None:
    response = APIClient().get("/api/tokens/")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


# --- every password change revokes every token --------------------------------------------


@pytest.fixture
def ann_tokens():  # type: ignore[no-untyped-def]
    ann = user("ann", is_staff=True, is_superuser=True)
    return ann, [api_token_issue(user=ann).token for _ in range(2)]


def _all_revoked(tokens: list[str]) -> bool:
    return not AuthToken.objects.exists() and not any(works(t) for t in tokens)


def test_the_password_change_form_revokes_them(ann_tokens) -> None:  # type: ignore[no-untyped-def]
    ann, tokens = ann_tokens
    form = PasswordChangeForm(
        ann,
        {
            "old_password": "pw-ann-123",
            "new_password1": NEW_PASSWORD,
            "new_password2": NEW_PASSWORD,
        },
    )
    assert form.is_valid(), form.errors
    form.save()
    assert _all_revoked(tokens)


def test_the_admins_own_password_change_page_revokes_them(ann_tokens) -> None:  # type: ignore[no-untyped-def]
    ann, tokens = ann_tokens
    c = Client()
    c.force_login(ann)
    response = c.post(
        "/admin/password_change/",
        {
            "old_password": "pw-ann-123",
            "new_password1": NEW_PASSWORD,
            "new_password2": NEW_PASSWORD,
        },
    )
    assert response.status_code == 302
    assert _all_revoked(tokens)


def test_the_password_reset_confirm_revokes_them(ann_tokens) -> None:  # type: ignore[no-untyped-def]
    ann, tokens = ann_tokens
    c = Client()
    uid = urlsafe_base64_encode(force_bytes(ann.pk))
    token = default_token_generator.make_token(ann)
    form_url = c.get(f"/accounts/reset/{uid}/{token}/")["Location"]
    response = c.post(form_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/accounts/reset/done/"
    assert _all_revoked(tokens)


def test_an_admin_setting_someones_password_revokes_them(ann_tokens) -> None:  # type: ignore[no-untyped-def]
    ann, tokens = ann_tokens
    boss = user("boss", is_staff=True, is_superuser=True)
    c = Client()
    c.force_login(boss)
    response = c.post(
        f"/admin/auth/user/{ann.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )
    assert response.status_code == 302
    assert _all_revoked(tokens)


def test_set_password_and_save_revokes_them(ann_tokens) -> None:  # type: ignore[no-untyped-def]
    ann, tokens = ann_tokens
    ann.set_password(NEW_PASSWORD)
    ann.save()
    assert _all_revoked(tokens)


def test_manage_py_changepassword_revokes_them(ann_tokens) -> None:  # type: ignore[no-untyped-def]
    _, tokens = ann_tokens
    with mock.patch("getpass.getpass", return_value=NEW_PASSWORD):
        call_command("changepassword", "ann", stdout=StringIO())
    assert _all_revoked(tokens)


def test_other_saves_of_the_user_keep_them(ann_tokens) -> None:  # type: ignore[no-untyped-def]
    ann, tokens = ann_tokens
    ann.email = "ann@example.com"
    ann.save()
    Client().post("/accounts/login/", {"username": "ann", "password": "pw-ann-123"})
    assert all(works(t) for t in tokens)


class OneRoundPBKDF2(PBKDF2PasswordHasher):
    """A stronger hasher than the tests' MD5, cheap enough for a test."""

    iterations = 1


def test_a_hash_upgrade_at_login_keeps_them(ann_tokens, settings) -> None:  # type: ignore[no-untyped-def]
    # Django rehashes a password with the preferred hasher at login: the same password.
    ann, tokens = ann_tokens
    settings.PASSWORD_HASHERS = [
        "tests.accounts.test_api_tokens.OneRoundPBKDF2",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
    response = Client().post("/accounts/login/", {"username": "ann", "password": "pw-ann-123"})
    assert response.status_code == 302
    ann.refresh_from_db()
    assert ann.password.startswith("pbkdf2_sha256$1$")
    assert all(works(t) for t in tokens)


def test_revoking_all_counts_only_that_users_tokens() -> None:
    ann, ben = user("ann"), user("ben")
    api_token_issue(user=ann)
    api_token_issue(user=ben)
    assert api_tokens_revoke_all(user_id=ann.pk) == 1
    assert AuthToken.objects.filter(user=ben).count() == 1


# --- the old plain tokens -----------------------------------------------------------------


def test_the_migration_forgets_drfs_plain_tokens() -> None:
    migration = importlib.import_module("accounts.migrations.0001_forget_plain_api_tokens")
    editor = SimpleNamespace(connection=connection)  # all the function uses of its editor
    ann = user("ann")
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamp,"
            " user_id integer)"
        )
        cursor.execute(
            "INSERT INTO authtoken_token VALUES (%s, %s, %s)", ["a" * 40, timezone.now(), ann.pk]
        )
    migration.forget_plain_tokens(None, editor)
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM authtoken_token")
        assert cursor.fetchone() == (0,)
    # A database that never had the table (a new one) is left alone.
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE authtoken_token")
    migration.forget_plain_tokens(None, editor)
