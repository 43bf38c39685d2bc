"""grader.services.submitting against the database: the checks and the caps of a submit."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from grader.models import Exercise, Submission
from grader.services import submitting
from tests.factories import student_create
from tests.pipeline.lifecycle import make

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("code", "message"),
    [("   \n", submitting.MSG_CODE_EMPTY), ("x" * (64 * 1024 + 1), submitting.MSG_CODE_TOO_LARGE)],
)
def test_create_rejects_bad_code(user, exercise, code, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(submitting.SubmissionRejected) as info:
        submitting.submission_create(user=user, exercise=exercise, code=code)
    assert info.value.message == message
    assert not Submission.objects.exists()


@override_settings(GRADER_MAX_QUEUED_PER_USER=2)
def test_per_user_queue_cap(user, exercise) -> None:  # type: ignore[no-untyped-def]
    make(user, exercise)
    make(user, exercise, status=Submission.Status.RUNNING)
    with pytest.raises(submitting.SubmissionRejected) as info:
        submitting.submission_create(user=user, exercise=exercise, code="pass")
    assert info.value.status_code == 429
    assert info.value.message == submitting.MSG_TOO_MANY_QUEUED.format(n=2)


@override_settings(GRADER_MAX_QUEUED_TOTAL=1)
def test_global_queue_cap(user, exercise) -> None:  # type: ignore[no-untyped-def]
    other = student_create(username="carol", password="pw-carol-1234")
    make(other, exercise)
    with pytest.raises(submitting.SubmissionRejected) as info:
        submitting.submission_create(user=user, exercise=exercise, code="pass")
    assert info.value.message == submitting.MSG_QUEUE_FULL


@pytest.mark.parametrize("own_waiting", [0, 1, 3])
def test_the_queue_position_counted_at_insert_is_the_selectors(user, exercise, own_waiting) -> None:  # type: ignore[no-untyped-def]
    from grader.selectors.submissions import submission_queue_position

    other = student_create(username="erin")
    past = timezone.now() - timedelta(seconds=5)
    for i, (priority, status) in enumerate(
        [(0, "queued"), (1, "queued"), (2, "queued"), (5, "queued"), (0, "running"), (1, "passed")]
    ):
        make(
            other,
            exercise,
            priority=priority,
            status=status,
            queued_at=past + timedelta(milliseconds=i),
        )
    for _ in range(own_waiting):  # each puts the new one a step further back (fair share)
        make(user, exercise, priority=0, queued_at=past)
    s = submitting.submission_create(user=user, exercise=exercise, code="def attention(): pass")
    assert s.queue_position_at_insert is not None
    assert s.priority == min(own_waiting, 9)
    read_back = Submission.objects.get(pk=s.pk)
    assert read_back.queue_position_at_insert is None  # not stored: counted afresh
    assert s.queue_position_at_insert == submission_queue_position(submission=read_back)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@override_settings(GRADER_MAX_QUEUED_PER_USER=2)
def test_per_user_cap_holds_under_concurrent_submits() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    user = student_create(username="racer", password="pw-racer-12345")
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    barrier = threading.Barrier(6)

    def one(i: int) -> str:
        try:
            barrier.wait()
            submitting.submission_create(user=user, exercise=exercise, code=f"x = {i}")
            return "created"
        except submitting.SubmissionRejected as rejected:
            return rejected.message
        finally:
            connection.close()  # this thread's own connection

    with ThreadPoolExecutor(6) as pool:
        outcomes = list(pool.map(one, range(6)))
    assert outcomes.count("created") == 2
    assert Submission.objects.filter(user=user).count() == 2


def test_a_users_recent_rows_are_the_window_and_the_unfinished(user, exercise) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    window = timedelta(seconds=submitting.settings.GRADER_FAIR_SHARE_WINDOW_SECONDS)
    for finished in (None, now - window - timedelta(seconds=1), now - window / 2, now):
        make(user, exercise, finished_at=finished, started_at=now)
    make(student_create(username="otto"), exercise)
    rows = submitting._recent(Submission.objects.filter(user_id=user.pk), now=now)
    assert len(rows) == 3  # the one finished before the window is left out
