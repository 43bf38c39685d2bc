"""accounts.usernames: sign-up refuses names that read as staff accounts; the staff accounts
made by management commands keep working."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from accounts.usernames import MSG_USERNAME_RESERVED, username_is_reserved

PASSWORD = "a-long-passphrase-42"


@pytest.mark.parametrize(
    "username",
    [
        "admin",
        "ADMIN",
        "Admin_2",
        "ad-min",
        "a.d.m.i.n",
        "admin42",
        "the_admin",
        "TheAdmin",
        "administrator",
        "staff",
        "staff.team",
        "Instructor",
        "instructor1",
        "teacher",
        "root",
        "support",
        "moderator",
        "superuser",
        "system",
        "security",
        "\uff53\uff54\uff41\uff46\uff46",  # full-width "staff" folds to ASCII
    ],
)
def test_staff_looking_names_are_reserved(username: str) -> None:
    assert username_is_reserved(username)


@pytest.mark.parametrize(
    "username", ["student", "badminton", "rootsy", "alice", "bob_42", "supporter", "systems99x"]
)
def test_ordinary_names_are_free(username: str) -> None:
    assert not username_is_reserved(username)


@pytest.mark.django_db
@pytest.mark.parametrize("username", ["admin", "Instructor_2", "root", "Staff-Team"])
def test_sign_up_refuses_a_reserved_name(username: str) -> None:
    response = Client().post(
        "/accounts/signup/", {"username": username, "password1": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 200
    assert MSG_USERNAME_RESERVED in response.content.decode()
    assert not get_user_model().objects.exists()


@pytest.mark.django_db
def test_sign_up_takes_an_ordinary_name() -> None:
    response = Client().post(
        "/accounts/signup/", {"username": "ada", "password1": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 302
    assert get_user_model().objects.filter(username="ada").exists()


@pytest.mark.django_db
def test_the_demo_instructor_is_made_by_its_command_and_logs_in() -> None:
    call_command("demo_accounts")
    response = Client().post(
        "/accounts/login/", {"username": "instructor", "password": "instructor-demo-pass"}
    )
    assert response.status_code == 302 and "sessionid" in response.cookies
