"""grader.heartbeat: one thread per worker process keeps the leases of its grades."""

from __future__ import annotations

import threading

import pytest
from django.test import override_settings

from grader import heartbeat
from grader.engine.grading import Verdict
from grader.models import Exercise, Submission
from grader.services import queue
from tests.factories import student_create
from tests.pipeline.lifecycle import make

pytestmark = pytest.mark.django_db


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@override_settings(GRADER_LEASE_SECONDS=1.0, GRADER_HEARTBEAT_SECONDS=0.05)
def test_the_heartbeat_renews_the_lease_while_the_block_runs() -> None:
    from tests.pipeline.stack import wait_until

    user = student_create(username="beat", password="pw-beat-12345")
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    s = make(user, exercise)
    held = queue.submission_claim(submission_id=s.pk, worker="w1:1:a")
    assert held is not None
    first = held.lease_expires_at

    def lease() -> object:
        return Submission.objects.get(pk=s.pk).lease_expires_at

    with heartbeat.submission_lease_kept(submission=held):
        wait_until(lambda: lease() > first, timeout=10, step=0.02)
    # The 1 s lease outlived by renewals: no other worker could take the row meanwhile.
    assert queue.submission_claim(submission_id=s.pk, worker="w2:2:b") is None


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@override_settings(GRADER_HEARTBEAT_SECONDS=0.02, CELERY_TASK_TIME_LIMIT=0)
def test_the_heartbeat_stops_renewing_past_the_hard_time_limit() -> None:
    import time

    user = student_create(username="wedged", password="pw-wedged-12345")
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    s = make(user, exercise)
    held = queue.submission_claim(submission_id=s.pk, worker="w1:1:a")
    assert held is not None
    with heartbeat.submission_lease_kept(submission=held):
        time.sleep(0.3)  # some fifteen heartbeat intervals: a wedged grade
    # Its lease was left to run out, so the sweeper can hand the row to a live worker.
    assert Submission.objects.get(pk=s.pk).lease_expires_at == held.lease_expires_at


def test_one_heartbeat_thread_serves_every_grade_of_a_process(user, exercise) -> None:  # type: ignore[no-untyped-def]
    # A thread per grade cost more than the grade's judging: grades only register with it.
    def heartbeats() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("lease")]

    for _ in range(3):
        s = make(user, exercise)
        held = queue.submission_claim(submission_id=s.pk, worker="w1:1:a")
        assert held is not None
        with heartbeat.submission_lease_kept(submission=held):
            assert len(heartbeats()) == 1
        queue.submission_finish(submission=held, verdict=Verdict(status="passed", score=1.0))
    assert len(heartbeats()) == 1
