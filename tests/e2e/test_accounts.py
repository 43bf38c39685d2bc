"""End to end in headless Chromium: accounts. Signing up (or logging in) from an exercise comes
back to it, and a forgotten password is reset through the mailed link.

The live server runs in this process with Django's test mail backend (locmem), so the reset
mail is read from django.core.mail.outbox: what the console backend prints in development.
"""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import mail
from playwright.sync_api import Page, expect

from tests.e2e.flows import ATTENTION_EXERCISE
from tests.factories import student_create

pytestmark = pytest.mark.e2e


def test_signing_up_from_an_exercise_comes_back_to_it(page: Page) -> None:
    page.goto(ATTENTION_EXERCISE)
    page.locator(".submit-panel").get_by_role("link", name="sign up").click()
    expect(page).to_have_url(re.compile(r"/accounts/signup/\?next=/exercises/"))
    page.get_by_label("Username").fill("newcomer")
    page.get_by_label("Password", exact=True).fill("a-long-passphrase-42")
    page.get_by_label("Password confirmation").fill("a-long-passphrase-42")
    page.get_by_role("button", name="Create account").click()
    expect(page).to_have_url(re.compile(re.escape(ATTENTION_EXERCISE) + "$"))
    expect(page.locator("#editor")).to_be_visible()  # logged in: the submit form is there
    assert get_user_model().objects.filter(username="newcomer").exists()


def test_logging_in_from_the_header_comes_back_to_the_page(page: Page) -> None:
    student_create(username="back-again", password="student-pass-123")
    page.goto(ATTENTION_EXERCISE)
    page.locator(".site-header").get_by_role("link", name="Log in").click()
    page.get_by_label("Username").fill("back-again")
    page.get_by_label("Password").fill("student-pass-123")
    page.locator("main form button[type=submit]").click()
    expect(page).to_have_url(re.compile(re.escape(ATTENTION_EXERCISE) + "$"))
    expect(page.locator(".site-header")).to_contain_text("back-again")


def test_a_forgotten_password_is_reset_through_the_mailed_link(page: Page) -> None:
    user = student_create(
        username="forgetful", email="forgetful@example.com", password="the-old-password-1"
    )
    mail.outbox.clear()
    page.goto("/accounts/login/")
    page.get_by_role("link", name="Forgot your password?").click()
    page.get_by_label("Email").fill("forgetful@example.com")
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()

    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["forgetful@example.com"]
    assert settings.PRODUCT_NAME in message.subject
    link = re.search(r"https?://\S+/accounts/reset/\S+/", message.body)
    assert link, message.body

    page.goto(link.group(0))
    expect(page.get_by_role("heading", name="Choose a new password")).to_be_visible()
    page.get_by_label("New password", exact=True).fill("a-brand-new-passphrase-7")
    page.get_by_label("New password confirmation").fill("a-brand-new-passphrase-7")
    page.get_by_role("button", name="Change my password").click()
    expect(page.get_by_role("heading", name="Password changed")).to_be_visible()
    user.refresh_from_db()
    assert user.check_password("a-brand-new-passphrase-7")

    # The link worked once.
    page.goto(link.group(0))
    expect(page.get_by_role("heading", name="This link does not work")).to_be_visible()


def test_an_unknown_address_gets_the_same_answer_and_no_mail(page: Page) -> None:
    mail.outbox.clear()
    page.goto("/accounts/password_reset/")
    page.get_by_label("Email").fill("nobody@example.com")
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    assert mail.outbox == []
