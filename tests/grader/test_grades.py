"""Grades out: best and latest score per student and exercise, as CSV, from the staff
pages and the API, safe to open in a spreadsheet."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.services.api_tokens import api_token_issue
from grader.api import MSG_GRADES_FORBIDDEN
from grader.models import Submission
from grader.selectors.grades import GRADES_COLUMNS, csv_cell, grades_csv, grades_rows
from tests.factories import exercise_get, submission_create, user_create

pytestmark = pytest.mark.django_db
T0 = timezone.now() - timedelta(days=1)


def _user(name: str, *, instructor: bool = False) -> Any:
    return user_create(username=name, password=f"pw-{name}-123", instructor=instructor)


def _sub(user: Any, slug: str, minutes: int, status: str, score: float | None) -> Submission:
    return submission_create(
        user=user,
        exercise=exercise_get(slug=slug),
        code="x = 1",
        seed=1,
        status=status,
        score=score,
        received_at=T0 + timedelta(minutes=minutes),
    )


def _parse(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_best_and_latest_over_graded_submissions_counting_every_one() -> None:
    ann = _user("ann")
    _sub(ann, "stable-softmax", 0, "passed", 1.0)
    _sub(ann, "stable-softmax", 1, "failed", 0.5)
    _sub(ann, "stable-softmax", 2, "internal-error", None)  # ours: not a grade
    last = _sub(ann, "stable-softmax", 3, "queued", None)
    _sub(ann, "multi-head-attention", 0, "failed", 0.25)
    rows = grades_rows()
    assert [(r.username, r.exercise) for r in rows] == [
        ("ann", "multi-head-attention"),
        ("ann", "stable-softmax"),
    ]
    softmax = rows[1]
    assert (softmax.best_score, softmax.latest_score, softmax.submissions) == (1.0, 0.5, 4)
    assert softmax.last_submitted_at == last.received_at


def test_the_csv_has_its_columns_and_one_row_per_student_and_exercise() -> None:
    _sub(_user("ann"), "stable-softmax", 0, "passed", 1.0)
    _sub(_user("bob"), "stable-softmax", 0, "queued", None)
    rows = _parse(grades_csv())
    assert tuple(rows[0]) == GRADES_COLUMNS
    assert rows[0]["username"] == "ann" and rows[0]["best_score"] == "1.0000"
    assert rows[1]["username"] == "bob" and rows[1]["best_score"] == ""
    assert rows[1]["submissions"] == "1"


def test_staff_submissions_are_not_in_the_grades() -> None:
    _sub(_user("ann"), "stable-softmax", 0, "passed", 1.0)
    _sub(_user("boss", instructor=True), "stable-softmax", 0, "failed", 0.5)
    assert [r.username for r in grades_rows()] == ["ann"]
    assert [r["username"] for r in _parse(grades_csv())] == ["ann"]


@pytest.mark.parametrize("name", ["=cmd", "+1", "-2", "@sum", "\tx"])
def test_a_cell_a_spreadsheet_would_run_is_written_as_text(name: str) -> None:
    assert csv_cell(name) == "'" + name
    assert csv_cell("ann") == "ann" and csv_cell(None) == "" and csv_cell(0.5) == "0.5000"


def test_a_formula_username_is_neutralised_in_the_export() -> None:
    _sub(_user("=HYPERLINK"), "stable-softmax", 0, "passed", 1.0)
    assert _parse(grades_csv())[0]["username"] == "'=HYPERLINK"


def test_staff_download_is_a_csv_attachment() -> None:
    _sub(_user("ann"), "stable-softmax", 0, "passed", 1.0)
    c = Client()
    c.force_login(_user("teacher", instructor=True))
    response = c.get("/staff/grades.csv")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="grades-')
    assert _parse(response.content.decode())[0]["username"] == "ann"
    assert 'href="/staff/grades.csv"' in c.get("/staff/submissions/").content.decode()


def test_api_grades_are_for_staff_who_may_view_submissions() -> None:
    _sub(_user("ann"), "stable-softmax", 0, "passed", 1.0)
    anonymous = APIClient().get("/api/grades.csv")
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"] == "Token"
    assert anonymous["Content-Type"] == "application/json"
    student = APIClient()
    student.credentials(HTTP_AUTHORIZATION=f"Token {api_token_issue(user=_user('s')).token}")
    forbidden = student.get("/api/grades.csv")
    assert forbidden.status_code == 403 and forbidden.json() == {"detail": MSG_GRADES_FORBIDDEN}
    bare_staff = user_create(username="bare-staff", is_staff=True)
    c = APIClient()
    c.force_authenticate(bare_staff)
    assert c.get("/api/grades.csv").status_code == 403
    bare_staff.user_permissions.add(Permission.objects.get(codename="view_submission"))
    c.force_authenticate(get_user_model().objects.get(pk=bare_staff.pk))  # fresh perm cache
    response = c.get("/api/grades.csv", HTTP_ACCEPT="application/json")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert _parse(response.content.decode())[0]["exercise"] == "stable-softmax"


def test_the_schema_documents_the_csv() -> None:
    schema = APIClient().get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/grades.csv"]["get"]
    assert list(operation["responses"]["200"]["content"]) == ["text/csv"]
    assert "application/json" in operation["responses"]["403"]["content"]
