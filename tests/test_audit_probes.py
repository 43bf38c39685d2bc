"""The probes of the outside security audit that no other test covered, as the audit ran them.

The audit was a script run against a live site (scripts/audit.py, now removed). Most of its
probes have a test elsewhere: the finding's reproduction in tests/test_security.py, and
tests/common/test_throttles.py, tests/accounts/test_login_lockout.py, tests/common/test_parsers.py,
tests/pipeline/test_api.py, tests/grader/test_django.py, tests/pipeline/test_fair_share.py and
tests/e2e/test_security.py. What is here is the part of a probe that none of those checked:
the audit's pages and vectors, its production rates, its declared 200 MB body.
"""

from __future__ import annotations

import io
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from common.middleware import MSG_BODY_TOO_LARGE
from grader.models import Submission
from grader.views.submissions import MSG_BAD_CODE
from questions.models import Page

pytestmark = pytest.mark.django_db

EXERCISE = "scaled-dot-product-attention"
EXPLAINER = "why-divide-by-sqrt-d"  # the page /explainer/ shows (questions.selectors)

# Finding 1: saved as the explainer's lead; none may become a live attribute or script.
XSS_WITH_MATH = [
    '[first]($x" autofocus onfocus="alert(document.domain)" x="$)',
    '[t](https://example.com "$x" onmouseover="alert(1)$")',
    '![$x" onerror="alert(1)$]($y$)',
    "[a]($x' onclick='alert(1)$)",
    '<a href="$x" onclick="alert(1)$">raw</a>',
    '`$x" onclick="alert(1)$`',
    '$<img src=x onerror="alert(1)">$',
]
XSS_WITHOUT_MATH = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)></svg>",
    "[j](javascript:alert(1))",
    '<a href="javascript:alert(1)">j</a>',
    '<iframe src="javascript:alert(1)"></iframe>',
    '<details open ontoggle="alert(1)">x</details>',
]
URL_ATTRIBUTES = ("href", "src", "action", "formaction", "xlink:href", "data")


class LiveScript(HTMLParser):
    """What could run script in a page: event-handler attributes, javascript: URLs, inline
    <script>, frames and plugins."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            v = (value or "").strip().lower()
            if name.startswith("on") or name in ("autofocus", "srcdoc"):
                self.found.append(f"<{tag} {name}=...>")
            url = v.replace("\t", "").replace("\n", "")
            if name in URL_ATTRIBUTES and url.startswith(("javascript:", "data:text")):
                self.found.append(f"<{tag} {name}={v[:30]}>")
        if tag == "script" and not dict(attrs).get("src"):
            self.found.append("<script> inline")
        if tag in ("iframe", "object", "embed", "base", "frame"):
            self.found.append(f"<{tag}>")


def live_script(html: str) -> list[str]:
    parser = LiveScript()
    parser.feed(html)
    return parser.found


def staff(username: str):
    """A staff account with no group and no permission (the audit's setup made one)."""
    return get_user_model().objects.create_user(
        username, password=f"pw-{username}-123", is_staff=True
    )


# --- 2: CSP and Permissions-Policy on the audit's pages -----------------------------------


@pytest.mark.parametrize("url", ["/explainer/", "/questions/", "/accounts/login/"])
def test_the_audits_pages_have_a_strict_csp_and_deny_device_apis(client: Client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 200
    directives = {
        part.split()[0]: part.split()[1:]
        for part in response["Content-Security-Policy"].split(";")
        if part.split()
    }
    assert directives["script-src"] == ["'self'"]
    assert directives["object-src"] == ["'none'"] and directives["base-uri"] == ["'none'"]
    assert directives["frame-ancestors"] == ["'none'"]
    for feature in ("camera=()", "microphone=()", "geolocation=()"):
        assert feature in response["Permissions-Policy"]


# --- 12: the schema documents /api/exercises/; missing credentials are a 401 --------------


def test_the_schema_documents_the_exercises_and_the_listing_keeps_the_answers() -> None:
    anon = APIClient()
    paths = anon.get("/api/schema/?format=json").json()["paths"]
    assert "/api/exercises/" in paths
    listed = anon.get("/api/exercises/").json()
    assert listed
    assert not [k for e in listed for k in e if k in ("reference", "checks", "solution")]


def test_an_anonymous_submit_is_401_with_www_authenticate() -> None:
    response = APIClient().post(
        "/api/submissions/", {"exercise": EXERCISE, "code": "x"}, format="json"
    )
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


# --- 1: stored XSS, saved through the admin, served on /explainer/ ------------------------


@pytest.mark.parametrize(
    "vectors", [XSS_WITH_MATH, XSS_WITHOUT_MATH], ids=["with-math", "without-math"]
)
def test_xss_saved_as_the_explainer_lead_in_the_admin_is_inert(
    client: Client, instructor, vectors: list[str]
) -> None:
    baseline = set(live_script(Client().get("/explainer/").content.decode()))
    page = Page.objects.get(slug=EXPLAINER)
    marker = "audit-marker-5f3a"  # proves the lead was saved and shown
    client.force_login(instructor)
    saved = client.post(
        f"/admin/questions/page/{page.pk}/change/",
        {
            "slug": page.slug,
            "title": page.title,
            "lead": "\n\n".join([marker, *vectors]),
            "body": page.body,
            "status": page.status,
            "_save": "Save",
        },
    )
    assert saved.status_code == 302
    html = Client().get("/explainer/").content.decode()
    assert marker in html
    assert [f for f in live_script(html) if f not in baseline] == []


# --- 8: staff without permissions, the pages the reproduction left out --------------------


@pytest.mark.parametrize("url", ["/staff/grades.csv", "/admin/grader/submission/"])
def test_staff_without_permissions_get_neither_grades_nor_the_admins_submissions(
    url: str,
) -> None:
    c = Client()
    c.force_login(staff("bare-staff"))
    assert c.get(url).status_code in (403, 404)


# --- 10: a NUL byte in code submitted by htmx ---------------------------------------------


def test_a_nul_byte_in_code_submitted_by_htmx_is_refused_with_its_message() -> None:
    c = Client()
    c.force_login(get_user_model().objects.create_user("ann", password="pw-ann-123"))
    response = c.post(
        f"/exercises/{EXERCISE}/submit/", {"code": "def f():\x00 pass"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200  # htmx swaps only 2xx: the message is the content
    assert MSG_BAD_CODE in response.content.decode()
    assert not Submission.objects.exists()


# --- 7: a declared 200 MB body, with the production cap -----------------------------------


class Unread(io.RawIOBase):
    """A request body that fails the test if anything reads it."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        raise AssertionError("the body was read")


def test_a_declared_200_mb_body_is_413_without_reading_it() -> None:
    response = Client().generic(
        "POST",
        "/api/token/",
        b"{",
        content_type="application/json",
        CONTENT_LENGTH=str(200 * 1024 * 1024),
        **{"wsgi.input": Unread()},
    )
    assert response.status_code == 413
    assert response.json()["detail"].startswith(MSG_BODY_TOO_LARGE.split("{")[0])


# --- 3: the token endpoint, new usernames each time, at the production rate ---------------


@pytest.mark.usefixtures("rate_window")
def test_token_requests_with_new_usernames_are_throttled_per_client(settings) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "token": "10/min"}  # the default
    c = APIClient()
    codes = [
        c.post("/api/token/", {"username": f"nobody-{i}", "password": "x"}).status_code
        for i in range(14)
    ]
    assert codes == [401] * 10 + [429] * 4
