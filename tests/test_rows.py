"""quizsite.rows: rows read by written-out statements equal the ORM's, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db.models import Model
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.exceptions import AuthenticationFailed

from accounts.authentication import TokenAuthentication
from accounts.services.api_tokens import api_token_issue
from grader.models import Exercise, Submission
from grader.services import submissions as services
from quizsite.rows import columns, row_get
from tests.factories import student_create, submission_create

pytestmark = pytest.mark.django_db


def same_fields(a: Model, b: Model) -> None:
    assert type(a) is type(b)
    for f in type(a)._meta.concrete_fields:
        x, y = getattr(a, f.attname), getattr(b, f.attname)
        assert (x, type(x)) == (y, type(y)), f.name
    assert b._state.adding is False and b._state.db == "default"


@pytest.fixture
def submission() -> Submission:
    user = student_create(username="rita")
    now = timezone.now()
    return submission_create(
        user=user,
        exercise=Exercise.objects.get(slug="scaled-dot-product-attention"),
        code="def attention(q, k, v):\n    return v\n",
        status=Submission.Status.FAILED,
        score=0.25,
        checks=[{"name": "scale", "passed": False, "message": "ünïcode √d_k"}],
        diagnosis=["missing-scale"],
        plots={"version": 1, "example": {"student": [[0.5, None]]}},
        seed=12345,
        attempts=2,
        worker="w:1",
        received_at=now - timedelta(seconds=3),
        queued_at=now - timedelta(seconds=3),
        started_at=now - timedelta(seconds=2, microseconds=123456),
        finished_at=now,
        lease_expires_at=None,
        priority=3,
    )


def test_a_row_with_its_related_row_equals_the_orms(submission, django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    orm = Submission.objects.select_related("exercise").get(pk=submission.pk)
    with django_assert_num_queries(1):
        read = row_get(Submission, lookup="pk", value=submission.pk, related="exercise")
        assert read is not None
        same_fields(orm, read)
        same_fields(orm.exercise, read.exercise)  # cached, as select_related caches it


def test_a_row_by_another_unique_field_and_a_missing_row() -> None:
    orm = Exercise.objects.get(slug="scaled-dot-product-attention")
    read = row_get(Exercise, lookup="slug", value="scaled-dot-product-attention")
    assert read is not None
    same_fields(orm, read)
    assert row_get(Exercise, lookup="slug", value="no-such-exercise") is None
    assert row_get(Submission, lookup="pk", value=10**9, related="exercise") is None


def test_some_columns_convert_as_the_orm_does(submission) -> None:  # type: ignore[no-untyped-def]
    from django.db import connection

    names = ["pk", "status", "started_at", "finished_at", "plots"]
    cols = columns(Submission, names)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {cols.sql} FROM grader_submission WHERE id = %s", [submission.pk])
        read = cols.convert(cursor.fetchone())
    assert read == list(Submission.objects.filter(pk=submission.pk).values_list(*names).get())


def test_the_token_scheme_reads_knoxs_row_and_keeps_its_answers() -> None:
    user = student_create(username="tess")
    issued = api_token_issue(user=user)
    got_user, token = TokenAuthentication().authenticate_credentials(issued.token.encode())
    same_fields(user, got_user)
    same_fields(AuthToken.objects.get(token_key=issued.prefix), token)
    assert token.user is got_user
    with pytest.raises(AuthenticationFailed, match=re.escape("Invalid token.")):
        TokenAuthentication().authenticate_credentials(b"0" * 64)
    user.is_active = False
    user.save()
    with pytest.raises(AuthenticationFailed, match=re.escape("User inactive or deleted.")):
        TokenAuthentication().authenticate_credentials(issued.token.encode())


def test_a_users_recent_rows_written_out_are_the_orms(submission) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    user, exercise = submission.user, submission.exercise
    window = timedelta(seconds=services.settings.GRADER_FAIR_SHARE_WINDOW_SECONDS)
    for finished in (None, now - window - timedelta(seconds=1), now - window / 2, now):
        submission_create(
            user=user, exercise=exercise, code="x", seed=1, finished_at=finished, started_at=now
        )
    other = student_create(username="otto")
    submission_create(user=other, exercise=exercise, code="x", seed=1)
    written = services._user_recent_rows(user_id=user.pk, now=now)
    orm = services._recent(Submission.objects.filter(user_id=user.pk), now=now)
    assert sorted(written) == sorted(orm)
    assert len(written) == 4  # the one finished before the window is left out
