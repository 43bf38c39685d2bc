"""common.middleware: no personal response may be cached (Cache-Control: private,
no-store), while anonymous pages that set no cookie keep their headers; and the settings
trust X-Forwarded-Proto only behind a proxy of our own (NUM_PROXIES)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.factories import student_create

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def _directives(response) -> set[str]:
    header = response.headers.get("Cache-Control", "")
    return {part.strip().lower() for part in header.split(",") if part.strip()}


def _private(response) -> bool:
    return {"private", "no-store"} <= _directives(response)


@pytest.fixture
def signed_in() -> Client:
    c = Client()
    c.force_login(student_create(username="cached", password="pw-cached-123"))
    return c


@pytest.mark.parametrize(
    "url", ["/", "/exercises/", "/questions/", "/questions/why-divide-before-softmax/"]
)
def test_pages_for_a_signed_in_user_are_private(signed_in: Client, url: str) -> None:
    response = signed_in.get(url)
    assert response.status_code == 200
    assert _private(response), response.headers.get("Cache-Control")


@pytest.mark.parametrize(
    "url", ["/api/exercises/", "/api/questions/", "/api/schema/", "/api/submissions/"]
)
def test_every_api_response_is_private_anonymous_or_not(url: str) -> None:
    response = APIClient().get(url)
    assert _private(response), (url, response.status_code, response.headers.get("Cache-Control"))


def test_api_responses_to_a_signed_in_caller_are_private() -> None:
    c = APIClient()
    c.force_authenticate(student_create(username="apier", password="pw-apier-123"))
    response = c.get("/api/submissions/")
    assert response.status_code == 200
    assert _private(response)


def test_an_anonymous_page_that_sets_the_csrf_cookie_is_private() -> None:
    response = Client().get("/accounts/login/")
    assert "csrftoken" in response.cookies
    assert _private(response)


def test_logging_in_sets_a_session_cookie_on_a_private_response() -> None:
    student_create(username="logs-in", password="pw-logs-in-123")
    response = Client().post(
        "/accounts/login/", {"username": "logs-in", "password": "pw-logs-in-123"}
    )
    assert response.status_code == 302 and "sessionid" in response.cookies
    assert _private(response)


@pytest.mark.parametrize("url", ["/explainer/", "/misconceptions/", "/exercises/"])
def test_anonymous_pages_without_cookies_keep_their_headers(url: str) -> None:
    response = Client().get(url)
    assert response.status_code == 200
    assert not response.cookies, url  # the premise: nothing personal in this response
    assert "Cache-Control" not in response.headers


# --- X-Forwarded-Proto ------------------------------------------------------------------------


def _proxy_ssl_header(num_proxies: str) -> str:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "quizsite.settings", "NUM_PROXIES": num_proxies}
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.SECURE_PROXY_SSL_HEADER)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_x_forwarded_proto_is_ignored_without_a_trusted_proxy() -> None:
    assert _proxy_ssl_header("0") == "None"


def test_x_forwarded_proto_is_trusted_behind_our_proxies() -> None:
    assert _proxy_ssl_header("1") == "('HTTP_X_FORWARDED_PROTO', 'https')"


def test_a_client_cannot_claim_https_with_the_header(settings) -> None:
    # The test settings are the real ones with NUM_PROXIES = 0.
    assert settings.NUM_PROXIES == 0
    from django.test import RequestFactory

    request = RequestFactory().get("/", HTTP_X_FORWARDED_PROTO="https")
    assert request.is_secure() is False
