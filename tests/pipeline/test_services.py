"""The submission services against the database: claim, fencing, sweep, caps."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from django.utils import timezone

from grader.models import Exercise, Submission
from grader.services import submissions as services

pytestmark = pytest.mark.django_db


@pytest.fixture
def user():  # type: ignore[no-untyped-def]
    return get_user_model().objects.create_user("bob", password="pw-bob-12345")


@pytest.fixture
def exercise() -> Exercise:
    return Exercise.objects.get(slug="scaled-dot-product-attention")


def make(user, exercise, **fields) -> Submission:  # type: ignore[no-untyped-def]
    fields.setdefault("status", Submission.Status.QUEUED)
    fields.setdefault("queued_at", timezone.now())
    return Submission.objects.create(user=user, exercise=exercise, code="x", seed=1, **fields)


def test_create_stores_a_queued_row_with_a_seed(user, exercise) -> None:  # type: ignore[no-untyped-def]
    s = services.submission_create(user=user, exercise=exercise, code="def attention(): pass")
    s.refresh_from_db()
    assert s.status == Submission.Status.QUEUED
    assert 0 <= s.seed < 2**31
    assert s.queued_at is not None


@pytest.mark.parametrize(
    ("code", "message"),
    [("   \n", services.MSG_CODE_EMPTY), ("x" * (64 * 1024 + 1), services.MSG_CODE_TOO_LARGE)],
)
def test_create_rejects_bad_code(user, exercise, code, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(services.SubmissionRejected) as info:
        services.submission_create(user=user, exercise=exercise, code=code)
    assert info.value.message == message
    assert not Submission.objects.exists()


@override_settings(GRADER_MAX_QUEUED_PER_USER=2)
def test_per_user_queue_cap(user, exercise) -> None:  # type: ignore[no-untyped-def]
    make(user, exercise)
    make(user, exercise, status=Submission.Status.RUNNING)
    with pytest.raises(services.SubmissionRejected) as info:
        services.submission_create(user=user, exercise=exercise, code="pass")
    assert info.value.status_code == 429
    assert info.value.message == services.MSG_TOO_MANY_QUEUED.format(n=2)


@override_settings(GRADER_MAX_QUEUED_TOTAL=1)
def test_global_queue_cap(user, exercise) -> None:  # type: ignore[no-untyped-def]
    other = get_user_model().objects.create_user("carol", password="pw-carol-1234")
    make(other, exercise)
    with pytest.raises(services.SubmissionRejected) as info:
        services.submission_create(user=user, exercise=exercise, code="pass")
    assert info.value.message == services.MSG_QUEUE_FULL


def test_only_one_claim_wins(user, exercise) -> None:  # type: ignore[no-untyped-def]
    s = make(user, exercise)
    first = services.submission_claim(submission_id=s.pk, worker="w1:1")
    second = services.submission_claim(submission_id=s.pk, worker="w2:2")
    assert first is not None and first.attempts == 1
    assert second is None


def test_an_expired_lease_can_be_taken_over_and_fences_the_old_holder(user, exercise) -> None:  # type: ignore[no-untyped-def]
    s = make(user, exercise)
    old = services.submission_claim(submission_id=s.pk, worker="w1:1")
    assert old is not None
    Submission.objects.filter(pk=s.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    new = services.submission_claim(submission_id=s.pk, worker="w2:2")
    assert new is not None and new.attempts == 2
    # The old holder wakes up late: its verdict must not land.
    assert not services.submission_finish(
        submission=old, verdict={"status": "failed", "score": 0.0}
    )
    assert services.submission_finish(submission=new, verdict={"status": "passed", "score": 1.0})
    s.refresh_from_db()
    assert (s.status, s.score) == ("passed", 1.0)


def test_a_finished_row_is_never_claimed_again(user, exercise) -> None:  # type: ignore[no-untyped-def]
    s = make(user, exercise, status=Submission.Status.PASSED)
    assert services.submission_claim(submission_id=s.pk, worker="w1:1") is None


@override_settings(GRADER_REQUEUE_AFTER_SECONDS=10, GRADER_MAX_ATTEMPTS=3)
def test_sweep_requeues_stale_and_expired_and_abandons_after_the_cap(user, exercise) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    fresh = make(user, exercise, queued_at=now)
    stale = make(user, exercise, queued_at=now - timedelta(seconds=60))
    expired = make(
        user,
        exercise,
        status=Submission.Status.RUNNING,
        attempts=1,
        lease_expires_at=now - timedelta(seconds=1),
    )
    dead = make(
        user,
        exercise,
        status=Submission.Status.RUNNING,
        attempts=3,
        lease_expires_at=now - timedelta(seconds=1),
    )
    report = services.submissions_sweep(now=now)
    assert report.requeued == 2  # stale + expired (publishing fails here: no broker; fine)
    assert report.abandoned == 1
    dead.refresh_from_db()
    assert dead.status == Submission.Status.INTERNAL_ERROR
    assert dead.message == services.MSG_INTERNAL_ERROR
    assert dead.score is None
    for s in (fresh, stale, expired):
        s.refresh_from_db()
    assert fresh.status == stale.status == Submission.Status.QUEUED
    assert expired.status == Submission.Status.RUNNING  # claimable again: its lease expired


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@override_settings(GRADER_MAX_QUEUED_PER_USER=2)
def test_per_user_cap_holds_under_concurrent_submits() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    user = get_user_model().objects.create_user("racer", password="pw-racer-12345")
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    barrier = threading.Barrier(6)

    def one(i: int) -> str:
        try:
            barrier.wait()
            services.submission_create(user=user, exercise=exercise, code=f"x = {i}")
            return "created"
        except services.SubmissionRejected as rejected:
            return rejected.message
        finally:
            connection.close()  # this thread's own connection

    with ThreadPoolExecutor(6) as pool:
        outcomes = list(pool.map(one, range(6)))
    assert outcomes.count("created") == 2
    assert Submission.objects.filter(user=user).count() == 2
