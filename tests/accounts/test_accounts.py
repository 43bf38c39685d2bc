"""accounts.views and accounts.password_reset: `next` after sign-up and log-in, and the
password reset and its rate limit."""

from __future__ import annotations

import re
import time

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client, RequestFactory

from accounts.views import safe_next
from tests.factories import student_create

pytestmark = pytest.mark.django_db

EXERCISE = "/exercises/scaled-dot-product-attention/"
PASSWORD = "a-long-passphrase-42"


def _signup(client: Client, username: str, next_url: str | None, **extra: str):
    data = {"username": username, "password1": PASSWORD, "password2": PASSWORD}
    if next_url is not None:
        data["next"] = next_url
    return client.post("/accounts/signup/", data, **extra)


# --- next ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "candidate",
    [EXERCISE, "/questions/why-divide-before-softmax/?role=ml#answer", "/"],
)
def test_next_keeps_a_page_of_this_site(candidate: str) -> None:
    request = RequestFactory().get("/accounts/signup/", {"next": candidate})
    assert safe_next(request) == candidate


@pytest.mark.parametrize(
    "candidate",
    [
        "https://evil.example/",
        "//evil.example/path",
        "///evil.example",
        "/\\evil.example",
        "\\\\evil.example",
        "javascript:alert(1)",
        "http://testserver.evil.example/",
        "",
    ],
)
def test_next_refuses_anything_that_leaves_the_site(candidate: str) -> None:
    request = RequestFactory().get("/accounts/signup/", {"next": candidate})
    assert safe_next(request) == ""


def test_next_never_downgrades_https_to_http() -> None:
    request = RequestFactory().get("/accounts/signup/", {"next": "http://testserver/"}, secure=True)
    assert safe_next(request) == ""


def test_next_from_the_form_wins_over_the_query() -> None:
    request = RequestFactory().post("/accounts/signup/?next=/questions/", {"next": EXERCISE})
    assert safe_next(request) == EXERCISE


def test_signing_up_returns_to_next() -> None:
    response = _signup(Client(), "came-from-exercise", EXERCISE)
    assert response.status_code == 302 and response["Location"] == EXERCISE


def test_signing_up_with_a_foreign_next_goes_home() -> None:
    response = _signup(Client(), "phished", "https://evil.example/steal")
    assert response.status_code == 302 and response["Location"] == "/"


def test_the_signup_form_carries_next_and_the_exercise_links_to_it() -> None:
    client = Client()
    page = client.get(EXERCISE).content.decode()
    # The submit panel's links and the header's.
    assert page.count(f'href="/accounts/signup/?next={EXERCISE}"') == 2
    assert page.count(f'href="/accounts/login/?next={EXERCISE}"') == 2
    form = client.get(f"/accounts/signup/?next={EXERCISE}").content.decode()
    assert f'name="next" value="{EXERCISE}"' in form
    # A foreign address is not even written into the form.
    form = client.get("/accounts/signup/?next=https://evil.example/").content.decode()
    assert "evil.example" not in form


def test_an_account_page_does_not_send_the_header_links_back_to_itself() -> None:
    page = Client().get("/accounts/login/").content.decode()
    assert 'href="/accounts/signup/"' in page
    assert "next=/accounts" not in page


def test_logging_in_returns_to_next_and_refuses_a_foreign_one() -> None:
    student_create(username="ann", password=PASSWORD)
    ok = Client().post(
        "/accounts/login/", {"username": "ann", "password": PASSWORD, "next": EXERCISE}
    )
    assert ok["Location"] == EXERCISE
    foreign = Client().post(
        "/accounts/login/", {"username": "ann", "password": PASSWORD, "next": "//evil.example/"}
    )
    assert foreign["Location"] == "/"


# --- password reset ----------------------------------------------------------------------------


def test_a_reset_mails_a_one_time_link_to_the_address() -> None:
    student_create(username="bob", email="bob@example.com", password=PASSWORD)
    response = Client().post("/accounts/password_reset/", {"email": "bob@example.com"})
    assert response.status_code == 302 and response["Location"] == "/accounts/password_reset/done/"
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.subject == f"Reset your password on {settings.PRODUCT_NAME}"
    link = re.search(r"http://testserver(/accounts/reset/[^/]+/[^/]+/)", message.body)
    assert link, message.body
    form = Client().get(link.group(1), follow=True)
    assert b"Choose a new password" in form.content


RESET = "/accounts/password_reset/"
RESET_DONE = "/accounts/password_reset/done/"


def _reset(email: str, address: str):
    return Client(REMOTE_ADDR=address).post(RESET, {"email": email})


def _same_answer(response) -> None:
    assert response.status_code == 302 and response["Location"] == RESET_DONE


@pytest.mark.usefixtures("rate_window")
def test_a_flood_from_elsewhere_never_blocks_the_owners_reset(settings) -> None:
    settings.PASSWORD_RESET_MAIL_GAP_SECONDS = 1
    student_create(username="eve", email="eve@example.com", password=PASSWORD)
    for _ in range(10):  # twice the per-client limit, all for the owner's address
        _same_answer(_reset("eve@example.com", "10.6.6.6"))
    assert len(mail.outbox) == 1  # the flood's own first mail; the rest were dropped
    time.sleep(1.1)  # the gap after the flood's last mail
    _same_answer(_reset("Eve@Example.com ", "10.1.1.1"))
    assert len(mail.outbox) == 2
    assert mail.outbox[-1].to == ["eve@example.com"]


@pytest.mark.usefixtures("rate_window")
def test_the_answer_is_the_same_whether_or_not_a_mail_is_sent(settings) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "password_reset": "1/hour"}
    student_create(username="fay", email="fay@example.com", password=PASSWORD)
    sent = _reset("fay@example.com", "10.2.0.1")  # a mail
    gap_held = _reset("fay@example.com", "10.2.0.2")  # no mail: one went out just now
    no_account = _reset("nobody@example.com", "10.2.0.3")  # no mail: no such account
    over_limit = _reset("fay@example.com", "10.2.0.1")  # no mail: this client asked already
    assert len(mail.outbox) == 1
    for response in (sent, gap_held, no_account, over_limit):
        _same_answer(response)
    done = Client().get(RESET_DONE)
    assert done.status_code == 200


@pytest.mark.usefixtures("rate_window")
def test_one_client_sends_at_most_its_limit_of_mails(settings) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "password_reset": "2/hour"}
    for name in ("gus", "hal", "ivy"):
        student_create(username=name, email=f"{name}@example.com", password=PASSWORD)
    for name in ("gus", "hal", "ivy"):
        _same_answer(
            Client(REMOTE_ADDR="10.9.9.9").post(
                RESET,
                {"email": f"{name}@example.com"},
                HTTP_X_FORWARDED_FOR=f"10.8.8.{len(name)}",  # not trusted with NUM_PROXIES = 0
            )
        )
    assert [m.to for m in mail.outbox] == [["gus@example.com"], ["hal@example.com"]]


@pytest.mark.usefixtures("rate_window")
def test_many_clients_together_cannot_flood_one_inbox() -> None:
    student_create(username="jo", email="jo@example.com", password=PASSWORD)
    for i in range(20):
        _same_answer(_reset("jo@example.com", f"10.3.0.{i}"))
    assert len(mail.outbox) == 1


def test_email_is_read_from_the_environment_and_defaults_to_the_console_in_development() -> None:
    from quizsite import settings as project

    assert project.EMAIL_BACKEND.endswith("console.EmailBackend")  # tests run with DEBUG on
    for name in ("EMAIL_HOST", "EMAIL_PORT", "EMAIL_HOST_USER", "EMAIL_HOST_PASSWORD"):
        assert hasattr(project, name)
    example = (settings.BASE_DIR / ".env.example").read_text()
    for name in ("EMAIL_BACKEND", "EMAIL_HOST", "EMAIL_PORT", "DEFAULT_FROM_EMAIL"):
        assert name in example


def test_signup_takes_an_optional_email_for_resets() -> None:
    response = Client().post(
        "/accounts/signup/",
        {
            "username": "eve",
            "email": "eve@example.com",
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
    )
    assert response.status_code == 302
    assert get_user_model().objects.get(username="eve").email == "eve@example.com"
