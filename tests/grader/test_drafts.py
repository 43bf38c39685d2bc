"""Draft (unpublished) exercises stay out of every student-facing read (grader.selectors):
the exercise page gives 404, so the history, a submission, a Run, a notice and the API must
not show the draft's title either."""

from __future__ import annotations

import pytest
from django.test import Client

from grader.models import Exercise, RegradeNotice, Submission, TrialRun
from tests.factories import instructor_create, student_create, submission_create

pytestmark = pytest.mark.django_db

DRAFT_SLUG = "draft-exercise"
DRAFT_TITLE = "Secret upcoming exercise about rotary embeddings"


@pytest.fixture
def draft() -> Exercise:
    return Exercise.objects.create(
        slug=DRAFT_SLUG,
        title=DRAFT_TITLE,
        kind=Exercise.Kind.ATTENTION,
        statement="Not yet.",
        starter_code="def attention(Q, K, V, mask=None):\n    pass\n",
        entry_point="attention",
        reference_solution="def attention(Q, K, V, mask=None):\n    return V\n",
        is_published=False,
    )


@pytest.fixture
def student():
    return student_create(username="drafty", password="pw-drafty-123")


def _browser(u) -> Client:
    c = Client()
    c.force_login(u)
    return c


def _student_trail(draft: Exercise, student) -> tuple[Submission, TrialRun]:
    """What a student may have left on the exercise before it went back to draft."""
    submission = submission_create(
        user=student,
        seed=1,
        exercise=draft,
        code="def attention(Q, K, V, mask=None):\n    return V\n",
        status=Submission.Status.FAILED,
        score=0.5,
        message="Some checks failed.",
    )
    RegradeNotice.objects.create(
        submission=submission,
        user=student,
        old_status=Submission.Status.FAILED,
        old_score=0.5,
        new_status=Submission.Status.PASSED,
        new_score=1.0,
        reason="A check was fixed.",
    )
    trial = TrialRun.objects.create(user=student, exercise=draft, code=submission.code)
    return submission, trial


def test_a_drafts_history_is_404_for_a_student(draft: Exercise, student) -> None:
    _student_trail(draft, student)
    c = _browser(student)
    assert c.get(f"/exercises/{DRAFT_SLUG}/").status_code == 404
    response = c.get(f"/exercises/{DRAFT_SLUG}/history/")
    assert response.status_code == 404
    assert DRAFT_TITLE not in response.content.decode()


def test_no_student_page_or_api_shows_a_drafts_title(draft: Exercise, student) -> None:
    submission, trial = _student_trail(draft, student)
    c = _browser(student)
    for url in (f"/submissions/{submission.pk}/", f"/runs/{trial.pk}/"):
        response = c.get(url)
        assert response.status_code == 404, url
        assert DRAFT_TITLE not in response.content.decode(), url
    # Pages that list the student's exercises, submissions and regrade notices.
    for url in ("/", "/exercises/", "/exercises/scaled-dot-product-attention/", "/questions/"):
        response = c.get(url)
        assert response.status_code == 200, url
        assert DRAFT_TITLE not in response.content.decode(), url
        assert DRAFT_SLUG not in response.content.decode(), url
    for url in ("/api/submissions/", "/api/exercises/", f"/api/runs/{trial.pk}/"):
        response = c.get(url)
        assert DRAFT_SLUG not in response.content.decode(), url
        assert DRAFT_TITLE not in response.content.decode(), url
    assert c.get(f"/api/submissions/{submission.pk}/").status_code == 404


def test_staff_who_may_view_submissions_still_read_a_drafts_submission(
    draft: Exercise, student
) -> None:
    submission, _ = _student_trail(draft, student)
    instructor = instructor_create(username="instr-drafts", password="pw-instr-123")
    response = _browser(instructor).get(f"/submissions/{submission.pk}/")
    assert response.status_code == 200
    assert DRAFT_TITLE in response.content.decode()
