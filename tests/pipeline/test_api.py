"""The submissions API: who sees what, bad input, limits, and the schema."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import override_settings
from rest_framework.test import APIClient

from grader.api import MSG_THROTTLED
from grader.models import Exercise, ExerciseCheck, Submission
from grader.selectors.submissions import MSG_CHECK_AFTER_DEADLINE, MSG_CHECK_HIDDEN
from grader.services import submitting as services
from tests.factories import student_create, submission_create

pytestmark = pytest.mark.django_db
URL = "/api/submissions/"


@pytest.fixture(autouse=True)
def _fresh_throttle_history() -> None:
    cache.clear()  # throttles count in the cache, which outlives each test's rollback


def client_for(username: str) -> APIClient:
    user = student_create(username=username, password=f"pw-{username}-123")
    c = APIClient()
    c.force_authenticate(user)
    c.user = user  # type: ignore[attr-defined]
    return c


def post(c: APIClient, body: object) -> object:
    return c.post(URL, body, format="json")


def test_anonymous_cannot_submit() -> None:
    response = APIClient().post(URL, {"exercise": "stable-softmax", "code": "x"}, format="json")
    assert response.status_code in (401, 403)
    assert not Submission.objects.exists()


def test_submit_returns_201_with_id_status_and_urls() -> None:
    c = client_for("ann")
    response = post(c, {"exercise": "stable-softmax", "code": "def softmax(x, axis=-1): ..."})
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "queued"
    assert body["url"] == f"/api/submissions/{body['id']}/"
    assert body["page_url"] == f"/submissions/{body['id']}/"
    assert response["Location"] == body["url"]
    assert "seed" not in body and "code" not in body


def test_each_serializer_binds_fields_of_its_own() -> None:
    from grader.api import SubmissionSerializer

    c = client_for("ann")
    ids = [post(c, {"exercise": "stable-softmax", "code": f"x = {i}"}).json()["id"] for i in (1, 2)]
    rows = [Submission.objects.get(pk=pk) for pk in ids]
    request = type("R", (), {"user": c.user})()
    first, second = (SubmissionSerializer(r, context={"request": request}) for r in rows)
    assert [first.data["id"], second.data["id"]] == ids
    for name, field in first.fields.items():
        assert field is not second.fields[name]
        assert field.parent is first and second.fields[name].parent is second
    for field in SubmissionSerializer._built_fields.values():  # the class's own, never bound
        assert getattr(field, "parent", None) is None


@pytest.mark.parametrize(
    ("body", "field"),
    [({}, "exercise"), ({"exercise": "stable-softmax"}, "code"), ({"code": "x"}, "exercise")],
)
def test_malformed_bodies_get_field_errors(body: dict, field: str) -> None:
    response = post(client_for("ann"), body)
    assert response.status_code == 400
    assert field in response.json()


def test_unknown_exercise_is_404() -> None:
    assert post(client_for("ann"), {"exercise": "nope", "code": "x"}).status_code == 404


def test_empty_code_is_400_with_the_message() -> None:
    response = post(client_for("ann"), {"exercise": "stable-softmax", "code": "  \n "})
    assert response.status_code == 400
    assert response.json() == {"code": [services.MSG_CODE_EMPTY]}  # a field error, as documented


def test_a_student_never_sees_anothers_submission() -> None:
    ann, ben = client_for("ann"), client_for("ben")
    sid = post(ann, {"exercise": "stable-softmax", "code": "x = 1"}).json()["id"]
    assert ann.get(f"{URL}{sid}/").status_code == 200
    assert ben.get(f"{URL}{sid}/").status_code == 404
    assert ben.get(URL).json()["results"] == []
    assert [s["id"] for s in ann.get(URL).json()["results"]] == [sid]


def test_the_list_is_paginated() -> None:
    body = client_for("ann").get(URL).json()
    assert set(body) == {"count", "next", "previous", "results"}


def test_missing_credentials_are_401_with_www_authenticate() -> None:
    response = APIClient().get(URL)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


def test_an_api_url_no_route_matches_is_a_json_404() -> None:
    response = APIClient().get("/api/no-such-thing/")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"


def test_exercises_list_their_contract_and_never_the_reference_or_checks() -> None:
    listed = APIClient().get("/api/exercises/").json()
    assert {e["slug"] for e in listed} >= {"stable-softmax", "scaled-dot-product-attention"}
    one = APIClient().get("/api/exercises/stable-softmax/").json()
    exercise = Exercise.objects.get(slug="stable-softmax")
    assert one["statement"] == exercise.statement
    assert one["starter_code"] == exercise.starter_code
    body = str(listed) + str(one)
    assert exercise.reference_solution.strip()[:40] not in body
    assert "reference" not in one and "checks" not in one
    assert APIClient().get("/api/exercises/nope/").status_code == 404


@override_settings(GRADER_MAX_QUEUED_PER_USER=1)
def test_queue_cap_is_429_with_a_clear_message() -> None:
    c = client_for("ann")
    assert post(c, {"exercise": "stable-softmax", "code": "x = 1"}).status_code == 201
    response = post(c, {"exercise": "stable-softmax", "code": "x = 2"})
    assert response.status_code == 429
    assert response.json()["detail"] == services.MSG_TOO_MANY_QUEUED.format(n=1)


@pytest.mark.usefixtures("rate_window")
def test_throttle_is_429_with_a_clear_message(settings) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "submissions": "2/min"}
    settings.GRADER_MAX_QUEUED_PER_USER = 10
    c = client_for("ann")
    codes = [post(c, {"exercise": "stable-softmax", "code": f"x = {i}"}) for i in range(3)]
    assert [r.status_code for r in codes[:2]] == [201, 201]
    assert codes[2].status_code == 429
    assert codes[2].json()["detail"].startswith(MSG_THROTTLED.split("{")[0])
    assert int(codes[2]["Retry-After"]) >= 1
    # Polling is not throttled.
    assert c.get(URL).status_code == 200


def test_check_messages_follow_their_visibility() -> None:
    c = client_for("ann")
    exercise = Exercise.objects.get(slug="stable-softmax")
    s = submission_create(
        user=c.user,
        exercise=exercise,
        code="x",
        seed=1,
        status="failed",
        score=0.5,
        checks=[
            {
                "name": "a",
                "label": "A",
                "passed": False,
                "message": "secret 1",
                "weight": 1,
                "visibility": ExerciseCheck.Visibility.HIDDEN,
            },
            {
                "name": "b",
                "label": "B",
                "passed": False,
                "message": "secret 2",
                "weight": 1,
                "visibility": ExerciseCheck.Visibility.AFTER_DEADLINE,
            },
            {
                "name": "c",
                "label": "C",
                "passed": True,
                "message": "Passed.",
                "weight": 1,
                "visibility": ExerciseCheck.Visibility.SHOWN,
            },
        ],
    )
    body = c.get(f"{URL}{s.pk}/").json()
    assert [ch["message"] for ch in body["checks"]] == [
        MSG_CHECK_HIDDEN,
        MSG_CHECK_AFTER_DEADLINE,
        "Passed.",
    ]
    assert "secret" not in str(body)


def test_the_schema_documents_submissions_without_hidden_fields() -> None:
    schema = APIClient().get("/api/schema/?format=json").json()
    assert "/api/submissions/" in schema["paths"]
    assert "/api/submissions/{id}/" in schema["paths"]
    props = schema["components"]["schemas"]["Submission"]["properties"]
    assert {"id", "status", "score", "checks", "diagnosis"} <= set(props)
    assert not {"seed", "reference_solution", "expected", "plots"} & set(props)


def test_a_submit_costs_its_few_statements_and_writes_only_the_new_row(
    monkeypatch, django_capture_on_commit_callbacks
) -> None:
    # The busiest write path (bench/pipeline.py's burst), the publish after the commit
    # included: the exercise; the user's lock (PostgreSQL; SQLite's IMMEDIATE transaction is
    # the lock there); their recent rows (the queue cap and the fair-share priority in one
    # read); one count for the total cap and, the queue holding ann's first submission, one
    # for the new row's queue position, which the reply reuses; the INSERT, priority included,
    # so no UPDATE after it (the grade rate is kept 2 s). Into an empty queue, the second count
    # is skipped. Force-authenticated: a token's lookup is one more.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    monkeypatch.setattr(services, "task_publish", lambda **kw: True)
    c = client_for("ann")
    post(c, {"exercise": "stable-softmax", "code": "def softmax(x, axis=-1): ..."})
    with (
        CaptureQueriesContext(connection) as queries,
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = post(c, {"exercise": "stable-softmax", "code": "def softmax(x, axis=-1): 1"})
    assert response.status_code == 201
    statements = [q["sql"] for q in queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]
    writes = [s.split()[0].upper() for s in statements if s.split()[0].upper() != "SELECT"]
    assert writes == ["INSERT"], statements
    assert len(statements) == (6 if connection.features.has_select_for_update else 5), statements


def test_a_submit_into_an_empty_queue_counts_the_queue_once(
    monkeypatch, django_capture_on_commit_callbacks
) -> None:
    # Nobody waits, so nobody is ahead: the position needs no count of its own.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    monkeypatch.setattr(services, "task_publish", lambda **kw: True)
    c = client_for("ann")
    with (
        CaptureQueriesContext(connection) as queries,
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = post(c, {"exercise": "stable-softmax", "code": "def softmax(x, axis=-1): 1"})
    assert response.status_code == 201
    assert response.json()["queue_position"] == 1
    counts = [q["sql"] for q in queries if q["sql"].startswith("SELECT COUNT")]
    assert len(counts) == 1, counts
