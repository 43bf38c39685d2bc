"""Security hardening: each audit finding's reproduction, which must now fail to work.

Finding 1 (XSS through math) is in tests/common/test_rendering.py and, in a real browser
under the CSP, in tests/e2e/test_security.py.
"""

from __future__ import annotations

import json
from wsgiref.util import is_hop_by_hop

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from accounts.login_lockout import MSG_LOCKED_OUT
from accounts.views import (
    MSG_SIGNUP_THROTTLED,
    MSG_USERNAME_CHARACTERS,
    MSG_USERNAME_TAKEN,
)
from common.middleware import MSG_BODY_TOO_LARGE
from common.parsers import MSG_JSON_TOO_DEEP
from grader.models import Exercise, ExerciseCheck, Submission
from grader.selectors.submissions import MSG_CHECK_HIDDEN
from grader.services.submitting import MSG_SUBMIT_THROTTLED
from questions.services import ANSWER_THROTTLED
from tests.factories import submission_create, user_create

pytestmark = pytest.mark.django_db
SLUG = "stable-softmax"
QUESTION = "/questions/why-divide-before-softmax/"


def user(username: str, *, staff: bool = False, instructor: bool = False):
    return user_create(
        username=username, password=f"pw-{username}-123", is_staff=staff, instructor=instructor
    )


def browser_for(u) -> Client:
    c = Client()
    c.force_login(u)
    return c


# --- 2: Content-Security-Policy and Permissions-Policy ------------------------------------


def _csp(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


@pytest.mark.parametrize("url", ["/", QUESTION, "/exercises/", "/api/questions/", "/api/docs/"])
def test_every_response_has_a_strict_csp(client: Client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 200
    csp = _csp(response)
    assert csp["script-src"] == ["'self'"]  # no inline script, no eval, no other origin
    assert csp["object-src"] == ["'none'"] and csp["base-uri"] == ["'none'"]
    assert csp["frame-ancestors"] == ["'none'"]
    assert "'unsafe-eval'" not in response["Content-Security-Policy"]
    assert "camera=()" in response["Permissions-Policy"]


def test_api_docs_load_their_start_up_script_from_a_file(client: Client) -> None:
    html = client.get("/api/docs/").content.decode()
    assert "<script>" not in html.replace(" ", "")
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200 and "SwaggerUIBundle" in script.content.decode()


# --- 7: body size and JSON depth ----------------------------------------------------------


def test_an_oversized_body_is_413_before_it_is_read(settings) -> None:
    settings.REQUEST_BODY_MAX_BYTES = 1024
    body = json.dumps({"username": "x" * 4096, "password": "y"})
    response = APIClient().post("/api/token/", body, content_type="application/json")
    assert response.status_code == 413
    assert response.json()["detail"] == MSG_BODY_TOO_LARGE.format(limit=1)
    # A WSGI app may not set hop-by-hop headers: wsgiref (runserver) turns them into a 500.
    assert not [h for h in response.headers if is_hop_by_hop(h)]


def test_a_page_body_over_the_cap_is_413_too(settings, client: Client) -> None:
    settings.REQUEST_BODY_MAX_BYTES = 1024
    response = client.post("/accounts/login/", {"username": "u", "password": "p" * 4096})
    assert response.status_code == 413


def test_deeply_nested_json_is_400_not_500() -> None:
    c = APIClient()
    c.force_authenticate(user("deep"))
    for depth in (50, 100_000):
        body = "[" * depth + "]" * depth
        response = c.post("/api/attempts/", body, content_type="application/json")
        assert response.status_code == 400, depth
        assert response.json()["detail"] == MSG_JSON_TOO_DEEP.format(depth=20)


# --- 8: staff pages need the model permissions --------------------------------------------


def _a_submission() -> Submission:
    return submission_create(
        user=user("victim"), exercise=Exercise.objects.get(slug=SLUG), seed=1, code="secret = 1"
    )


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/staff/submissions/"),
        ("get", "/staff/misconceptions/"),
        ("get", f"/staff/exercises/{SLUG}/regrade/"),
        ("post", f"/staff/exercises/{SLUG}/regrade/"),
    ],
)
def test_staff_without_permissions_get_403(method: str, url: str) -> None:
    c = browser_for(user("bare-staff", staff=True))
    response = getattr(c, method)(url, {"action": "apply"} if method == "post" else None)
    assert response.status_code == 403


def test_staff_without_permissions_cannot_read_others_code() -> None:
    submission = _a_submission()
    c = browser_for(user("bare-staff", staff=True))
    assert c.get(f"/submissions/{submission.pk}/").status_code == 404
    assert c.get(f"/submissions/{submission.pk}/status/").status_code == 404


def test_regrade_needs_its_own_permission(monkeypatch: pytest.MonkeyPatch) -> None:
    viewer = user("viewer", staff=True)
    from django.contrib.auth.models import Permission

    viewer.user_permissions.add(Permission.objects.get(codename="view_submission"))
    c = browser_for(viewer)
    assert c.get(f"/staff/exercises/{SLUG}/regrade/").status_code == 200
    assert c.post(f"/staff/exercises/{SLUG}/regrade/", {"action": "apply"}).status_code == 403


def test_instructors_keep_their_staff_pages() -> None:
    submission = _a_submission()
    c = browser_for(user("teacher", instructor=True))
    assert c.get("/staff/submissions/").status_code == 200
    assert c.get(f"/submissions/{submission.pk}/").status_code == 200
    response = c.post(f"/staff/exercises/{SLUG}/regrade/", {"action": "apply"})
    assert response.status_code == 302


# --- 10: crafted input is a 400 or a 404, never a 500 ------------------------------------


@pytest.mark.parametrize("query", ["role=a%00b", "level=a%00", "level=L9", "role=%C2%B2"])
def test_bad_question_filters_are_400(query: str) -> None:
    assert APIClient().get(f"/api/questions/?{query}").status_code == 400


@pytest.mark.parametrize(
    "query", ["a=%C2%B2&b=1", "a=99999999999999999999&b=1", "a=1%00&b=2", "page=%00"]
)
def test_bad_history_parameters_are_400(query: str) -> None:
    c = browser_for(user("ann"))
    assert c.get(f"/exercises/{SLUG}/history/?{query}").status_code == 400


@pytest.mark.parametrize(
    "query", ["user=a%00", "exercise=a%00", "misconception=%00", "status=nope", "page=%C2%B2"]
)
def test_bad_staff_filters_are_400(query: str) -> None:
    c = browser_for(user("teacher", instructor=True))
    assert c.get(f"/staff/submissions/?{query}").status_code == 400


def test_a_nul_byte_in_submitted_code_is_refused() -> None:
    c = browser_for(user("ann"))
    response = c.post(f"/exercises/{SLUG}/submit/", {"code": "def f():\x00 pass"})
    assert response.status_code == 302
    assert not Submission.objects.exists()


def test_a_nul_byte_in_an_answer_is_400() -> None:
    assert Client().post(f"{QUESTION}answer/", {"text": "scale\x00"}).status_code == 400


# --- 3: brute force on every login path ---------------------------------------------------


def test_the_login_form_locks_out_after_repeated_failures(settings) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    user("ann")
    c = Client()
    codes = [
        c.post("/accounts/login/", {"username": "ann", "password": "wrong"}).status_code
        for _ in range(4)
    ]
    assert codes[:2] == [200, 200] and codes[3] == 429
    # Locked out even with the right password now.
    response = c.post("/accounts/login/", {"username": "ann", "password": "pw-ann-123"})
    assert response.status_code == 429 and "_auth_user_id" not in c.session


def test_the_admin_login_locks_out_too(settings) -> None:
    settings.AXES_FAILURE_LIMIT = 2
    user("boss", instructor=True)
    c = Client()
    for _ in range(2):
        c.post("/admin/login/", {"username": "boss", "password": "wrong"})
    response = c.post("/admin/login/", {"username": "boss", "password": "pw-boss-123"})
    assert response.status_code == 429


@pytest.mark.usefixtures("rate_window")
def test_token_creation_locks_out_and_is_throttled(settings) -> None:
    settings.AXES_FAILURE_LIMIT = 2
    user("ann")
    c = APIClient()
    codes = [c.post("/api/token/", {"username": "ann", "password": "x"}).status_code]
    codes.append(c.post("/api/token/", {"username": "ann", "password": "x"}).status_code)
    assert codes == [401, 429]  # the second failure reaches the limit
    locked = c.post("/api/token/", {"username": "ann", "password": "pw-ann-123"})
    assert locked.status_code == 429 and "token" not in locked.json()
    assert locked.json()["detail"] == MSG_LOCKED_OUT

    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "token": "2/min"}
    user("bob")
    other = APIClient(REMOTE_ADDR="10.1.1.1")
    codes = [
        other.post("/api/token/", {"username": "bob", "password": "pw-bob-123"}).status_code
        for _ in range(3)
    ]
    assert codes == [200, 200, 429]


# --- 5: one limit per user and action, whatever the path ----------------------------------


@pytest.mark.usefixtures("rate_window")
def test_the_page_form_and_the_api_share_the_submission_limit(settings) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "submissions": "3/min"}
    settings.GRADER_MAX_QUEUED_PER_USER = 100
    ann = user("ann")
    page = browser_for(ann)
    api = APIClient()
    api.force_authenticate(ann)
    for i in range(2):
        page.post(f"/exercises/{SLUG}/submit/", {"code": f"x = {i}"})
    assert api.post("/api/submissions/", {"exercise": SLUG, "code": "y"}).status_code == 201
    refused = api.post("/api/submissions/", {"exercise": SLUG, "code": "z"})
    assert refused.status_code == 429
    page_refused = page.post(
        f"/exercises/{SLUG}/submit/", {"code": "w"}, headers={"HX-Request": "true"}
    )
    assert MSG_SUBMIT_THROTTLED.split("{")[0] in page_refused.content.decode()
    assert Submission.objects.count() == 3


@pytest.mark.usefixtures("rate_window")
def test_sign_up_is_limited_per_client(settings) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "signup": "2/hour"}
    created = []
    for i in range(3):
        c = Client()
        pw = "a-long-passphrase-42"
        response = c.post(
            "/accounts/signup/",
            {"username": f"new{i}", "password1": pw, "password2": pw},
            HTTP_X_FORWARDED_FOR=f"10.9.9.{i}",  # not trusted with NUM_PROXIES = 0
        )
        created.append(response.status_code)
    assert created == [302, 302, 429]
    assert MSG_SIGNUP_THROTTLED.split("{")[0] in response.content.decode()
    assert get_user_model().objects.count() == 2


@pytest.mark.usefixtures("rate_window")
def test_anonymous_answers_are_limited_per_client(settings) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "answers_anon": "2/min"}
    codes = []
    for _ in range(3):  # a fresh session each time: dropping the cookie buys nothing
        response = Client().post(f"{QUESTION}answer/", {"text": "it keeps the variance at one"})
        codes.append(response.status_code)
    assert codes == [302, 302, 429]
    assert ANSWER_THROTTLED.split("{")[0] in response.content.decode()


# --- 9: hidden checks stay hidden on old submissions --------------------------------------


def test_hiding_a_check_hides_it_on_earlier_submissions() -> None:
    exercise = Exercise.objects.get(slug=SLUG)
    check = exercise.checks.first()
    check.visibility = ExerciseCheck.Visibility.SHOWN
    check.save()
    ann = user("ann")
    submission = submission_create(
        user=ann,
        exercise=exercise,
        seed=1,
        code="x",
        status="failed",
        checks=[
            {
                "name": check.name,
                "label": check.label,
                "passed": False,
                "weight": 1.0,
                "message": "expected 0.125, got 1.0",
                "visibility": "shown",
            }
        ],
    )
    check.visibility = ExerciseCheck.Visibility.HIDDEN
    check.save()
    api = APIClient()
    api.force_authenticate(ann)
    body = api.get(f"/api/submissions/{submission.pk}/").json()
    assert body["checks"][0]["message"] == MSG_CHECK_HIDDEN
    html = browser_for(ann).get(f"/submissions/{submission.pk}/").content.decode()
    assert "0.125" not in html


# --- 13: look-alike usernames; the token endpoint with a session cookie -------------------


@pytest.mark.parametrize(
    ("username", "message"),
    [("\u0455tudent", MSG_USERNAME_CHARACTERS), ("Student", MSG_USERNAME_TAKEN)],
)
def test_look_alike_usernames_are_refused(username: str, message: str) -> None:
    user("student")
    pw = "a-long-passphrase-42"
    response = Client().post(
        "/accounts/signup/", {"username": username, "password1": pw, "password2": pw}
    )
    assert response.status_code == 200
    assert message in response.content.decode()
    assert get_user_model().objects.count() == 1


def test_token_creation_works_with_a_session_cookie() -> None:
    ann = user("ann")
    c = APIClient(enforce_csrf_checks=True)
    c.force_login(ann)
    response = c.post("/api/token/", {"username": "ann", "password": "pw-ann-123"})
    assert response.status_code == 200 and response.json()["token"]


# --- 6: fair share of grading -------------------------------------------------------------


def _queued(owner, **fields) -> Submission:
    from django.utils import timezone

    fields.setdefault("queued_at", timezone.now())
    return submission_create(
        user=owner, exercise=Exercise.objects.get(slug=SLUG), seed=1, code="x", **fields
    )


def test_one_running_submission_per_user_and_the_rest_wait(monkeypatch) -> None:
    from grader.services import grading
    from grader.services.queue import submission_claim

    republished: list[tuple[int, float | None]] = []
    monkeypatch.setattr(
        grading,
        "submission_enqueue",
        lambda *, submission_id, countdown=None: republished.append((submission_id, countdown)),
    )
    burner, honest = user("burner"), user("honest")
    first, second = _queued(burner), _queued(burner)
    mine = _queued(honest)
    assert submission_claim(submission_id=first.pk, worker="w1") is not None
    # The burner's second waits while the first runs, and goes back to the queue shortly...
    assert grading.submission_grade(submission_id=second.pk, worker="w2", executor=None) is None
    second.refresh_from_db()
    assert second.status == Submission.Status.QUEUED and republished == [(second.pk, 1.0)]
    # ...while another user's submission is claimed at once.
    assert submission_claim(submission_id=mine.pk, worker="w2") is not None
    Submission.objects.filter(pk=first.pk).update(status=Submission.Status.PASSED)
    assert submission_claim(submission_id=second.pk, worker="w2") is not None


def test_a_queued_submission_shows_its_place_in_the_queue() -> None:
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    ann, ben = user("ann"), user("ben")
    _queued(ben, queued_at=now - timedelta(seconds=5))
    mine = _queued(ann, queued_at=now)
    api = APIClient()
    api.force_authenticate(ann)
    assert api.get(f"/api/submissions/{mine.pk}/").json()["queue_position"] == 2
    Submission.objects.filter(pk=mine.pk).update(status=Submission.Status.RUNNING)
    assert api.get(f"/api/submissions/{mine.pk}/").json()["queue_position"] is None
