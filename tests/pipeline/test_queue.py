"""grader.services.queue against the database: the claim, the fencing, the lease, the sweep."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from grader.engine.grading import Verdict
from grader.models import Submission
from grader.services import queue, submitting
from tests.factories import student_create
from tests.pipeline.lifecycle import make

pytestmark = pytest.mark.django_db


def test_create_stores_a_queued_row_whose_first_claim_draws_the_seed(user, exercise) -> None:  # type: ignore[no-untyped-def]
    s = submitting.submission_create(user=user, exercise=exercise, code="def attention(): pass")
    s.refresh_from_db()
    assert s.status == Submission.Status.QUEUED
    assert s.seed == Submission.SEED_UNDRAWN
    assert s.queued_at is not None
    claimed = queue.submission_claim(submission_id=s.pk, worker="w1:1", seed=12345)
    assert claimed is not None and claimed.seed == 12345
    # Any later claim (a retry, a regrade) keeps it: the verdict replays.
    queue.submission_release(submission=claimed)
    again = queue.submission_claim(submission_id=s.pk, worker="w2:2", seed=999)
    assert again is not None and again.seed == 12345
    other = student_create(username="dora")  # (one running grade per user)
    random = make(other, exercise, seed=Submission.SEED_UNDRAWN)
    drawn = queue.submission_claim(submission_id=random.pk, worker="w1:1")
    assert drawn is not None and 0 <= drawn.seed < 2**31


def test_only_one_claim_wins(user, exercise) -> None:  # type: ignore[no-untyped-def]
    s = make(user, exercise)
    first = queue.submission_claim(submission_id=s.pk, worker="w1:1")
    second = queue.submission_claim(submission_id=s.pk, worker="w2:2")
    assert first is not None and first.attempts == 1
    assert second is None


def test_an_expired_lease_can_be_taken_over_and_fences_the_old_holder(user, exercise) -> None:  # type: ignore[no-untyped-def]
    s = make(user, exercise)
    old = queue.submission_claim(submission_id=s.pk, worker="w1:1")
    assert old is not None
    Submission.objects.filter(pk=s.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    new = queue.submission_claim(submission_id=s.pk, worker="w2:2")
    assert new is not None and new.attempts == 2
    # The old holder wakes up late: its verdict must not land.
    assert not queue.submission_finish(submission=old, verdict=Verdict(status="failed", score=0.0))
    assert queue.submission_finish(submission=new, verdict=Verdict(status="passed", score=1.0))
    s.refresh_from_db()
    assert (s.status, s.score) == ("passed", 1.0)


def test_a_finished_row_is_never_claimed_again(user, exercise) -> None:  # type: ignore[no-untyped-def]
    s = make(user, exercise, status=Submission.Status.PASSED)
    assert queue.submission_claim(submission_id=s.pk, worker="w1:1") is None


def test_a_running_row_is_not_claimed_again_by_its_own_name_while_the_lease_holds(
    user, exercise
) -> None:  # type: ignore[no-untyped-def]
    # Two containers on one host have processes with the same host:pid; a duplicate delivery
    # reaching the other one must not start a second sandbox run.
    s = make(user, exercise)
    assert queue.submission_claim(submission_id=s.pk, worker="host:4") is not None
    assert queue.submission_claim(submission_id=s.pk, worker="host:4") is None
    s.refresh_from_db()
    assert s.attempts == 1


def test_lease_renewal_extends_only_the_holders_lease(user, exercise) -> None:  # type: ignore[no-untyped-def]
    s = make(user, exercise)
    held = queue.submission_claim(submission_id=s.pk, worker="w1:1:a")
    assert held is not None
    past = timezone.now() - timedelta(seconds=1)
    Submission.objects.filter(pk=s.pk).update(lease_expires_at=past)
    assert queue.submission_lease_renew(submission=held)
    s.refresh_from_db()
    assert s.lease_expires_at > timezone.now()
    # Taken over (attempts bumped): the old holder's heartbeat matches nothing.
    Submission.objects.filter(pk=s.pk).update(lease_expires_at=past)
    taker = queue.submission_claim(submission_id=s.pk, worker="w2:2:b")
    assert taker is not None
    before = Submission.objects.get(pk=s.pk).lease_expires_at
    assert not queue.submission_lease_renew(submission=held)
    assert Submission.objects.get(pk=s.pk).lease_expires_at == before


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
    report = queue.submissions_sweep(now=now)
    assert report.requeued == 2  # stale + expired (publishing fails here: no broker; fine)
    assert report.abandoned == 1
    dead.refresh_from_db()
    assert dead.status == Submission.Status.INTERNAL_ERROR
    assert dead.message == queue.MSG_INTERNAL_ERROR
    assert dead.score is None
    for s in (fresh, stale, expired):
        s.refresh_from_db()
    assert fresh.status == stale.status == expired.status == Submission.Status.QUEUED


@override_settings(GRADER_REQUEUE_AFTER_SECONDS=10, GRADER_MAX_ATTEMPTS=3)
def test_two_sweeps_at_once_publish_each_row_once(user, exercise, no_publish) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    stale = make(user, exercise, queued_at=now - timedelta(seconds=60))
    expired = make(
        user,
        exercise,
        status=Submission.Status.RUNNING,
        attempts=1,
        worker="dead:7:a",
        lease_expires_at=now - timedelta(seconds=1),
    )
    first = queue.submissions_sweep(now=now)
    second = queue.submissions_sweep(now=now)  # a second beat, same moment
    assert (first.requeued, second.requeued) == (2, 0)
    assert sorted(no_publish) == sorted([stale.pk, expired.pk])
    expired.refresh_from_db()
    assert expired.status == Submission.Status.QUEUED
    # The dead holder is fenced: neither its heartbeat nor its verdict lands.
    dead = Submission(pk=expired.pk, attempts=1, worker="dead:7:a")
    assert not queue.submission_lease_renew(submission=dead)
    assert not queue.submission_finish(submission=dead, verdict=Verdict(status="failed", score=0.0))


@override_settings(GRADER_REQUEUE_AFTER_SECONDS=10)
def test_the_sweep_stops_publishing_when_the_broker_is_away(user, exercise, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[int] = []

    def enqueue(*, submission_id: int, countdown: float | None = None) -> bool:
        calls.append(submission_id)
        return False

    monkeypatch.setattr(queue, "submission_enqueue", enqueue)
    old = timezone.now() - timedelta(seconds=60)
    for _ in range(3):
        make(user, exercise, queued_at=old)
    queue.submissions_sweep()
    assert len(calls) == 1  # not one publish timeout per row


class _Undo(Exception):
    pass


@pytest.mark.parametrize("one_running_per_user", [True, False])
def test_the_written_out_claim_takes_exactly_the_rows_claimable_selects(
    user, exercise, one_running_per_user
) -> None:  # type: ignore[no-untyped-def]
    from django.db import transaction

    now = timezone.now()
    hour = timedelta(hours=1)
    busy, free = student_create(username="busy"), student_create(username="free")
    rows = [
        make(user, exercise),
        make(user, exercise, status=Submission.Status.RUNNING, lease_expires_at=now - hour),
        make(user, exercise, status=Submission.Status.PASSED),
        make(user, exercise, status=Submission.Status.INTERNAL_ERROR),
        make(busy, exercise, status=Submission.Status.RUNNING, lease_expires_at=now + hour),
        make(busy, exercise),  # waits while its user's other row runs, with the setting on
        make(free, exercise, status=Submission.Status.RUNNING, lease_expires_at=now - hour),
        make(free, exercise),
    ]
    claimable = Submission.objects.claimable(now=now, one_running_per_user=one_running_per_user)
    expected = set(claimable.values_list("pk", flat=True))
    assert expected  # some, not all: the comparison means something
    claimed = set()
    with override_settings(GRADER_ONE_RUNNING_PER_USER=one_running_per_user):
        for row in rows:
            try:  # each claim alone: a claim makes its user's other rows wait
                with transaction.atomic():
                    if queue.submission_claim(submission_id=row.pk, worker="w:1:a"):
                        claimed.add(row.pk)
                    raise _Undo
            except _Undo:
                pass
    assert claimed == expected
    assert len(expected) == (4 if one_running_per_user else 5)
