"""The submission services against the database: claim, fencing, sweep, caps."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from grader.models import Exercise, Submission
from grader.services import submissions as services
from tests.factories import student_create, submission_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def user():  # type: ignore[no-untyped-def]
    return student_create(username="bob", password="pw-bob-12345")


@pytest.fixture
def exercise() -> Exercise:
    return Exercise.objects.get(slug="scaled-dot-product-attention")


def make(user, exercise, **fields) -> Submission:  # type: ignore[no-untyped-def]
    fields.setdefault("status", Submission.Status.QUEUED)
    fields.setdefault("queued_at", timezone.now())
    fields.setdefault("seed", 1)
    return submission_create(user=user, exercise=exercise, code="x", **fields)


def test_create_stores_a_queued_row_whose_first_claim_draws_the_seed(user, exercise) -> None:  # type: ignore[no-untyped-def]
    s = services.submission_create(user=user, exercise=exercise, code="def attention(): pass")
    s.refresh_from_db()
    assert s.status == Submission.Status.QUEUED
    assert s.seed == Submission.SEED_UNDRAWN
    assert s.queued_at is not None
    claimed = services.submission_claim(submission_id=s.pk, worker="w1:1", seed=12345)
    assert claimed is not None and claimed.seed == 12345
    # Any later claim (a retry, a regrade) keeps it: the verdict replays.
    services.submission_release(submission=claimed)
    again = services.submission_claim(submission_id=s.pk, worker="w2:2", seed=999)
    assert again is not None and again.seed == 12345
    other = student_create(username="dora")  # (one running grade per user)
    random = make(other, exercise, seed=Submission.SEED_UNDRAWN)
    drawn = services.submission_claim(submission_id=random.pk, worker="w1:1")
    assert drawn is not None and 0 <= drawn.seed < 2**31


def test_a_worker_grades_a_new_submission_on_the_inputs_it_prepared(  # type: ignore[no-untyped-def]
    user, exercise, monkeypatch
) -> None:
    from grader.engine import grading

    plans = services._Plans()
    monkeypatch.setattr(services, "_plans", plans)
    used: list[object] = []
    real_grade = grading.grade
    monkeypatch.setattr(grading, "grade", lambda **kw: used.append(kw["plan"]) or real_grade(**kw))
    from grader.engine.reference import REFERENCE_SOURCES
    from tests.grader.fakes import SourceLookupExecutor

    code = REFERENCE_SOURCES["attention"]
    for _ in range(2):
        s = services.submission_create(user=user, exercise=exercise, code=code)
        assert (
            services.submission_grade(
                submission_id=s.pk, worker="w:1", executor=SourceLookupExecutor()
            )
            == Submission.Status.PASSED
        )
    # The first had nothing prepared; the second got the plan made after the first verdict,
    # for the seed stored in its row at the claim.
    assert used[0] is None and used[1] is not None
    s.refresh_from_db()
    assert used[1].seed == s.seed and 0 <= s.seed < 2**31
    # The verdict is what grading that seed from scratch gives.
    assert s.status == Submission.Status.PASSED


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
    other = student_create(username="carol", password="pw-carol-1234")
    make(other, exercise)
    with pytest.raises(services.SubmissionRejected) as info:
        services.submission_create(user=user, exercise=exercise, code="pass")
    assert info.value.message == services.MSG_QUEUE_FULL


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
    s = services.submission_create(user=user, exercise=exercise, code="def attention(): pass")
    assert s.queue_position_at_insert is not None
    assert s.priority == min(own_waiting, 9)
    read_back = Submission.objects.get(pk=s.pk)
    assert read_back.queue_position_at_insert is None  # not stored: counted afresh
    assert s.queue_position_at_insert == submission_queue_position(submission=read_back)


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
    assert fresh.status == stale.status == expired.status == Submission.Status.QUEUED


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


# --- reliability: identity, lease, the verdict's write, release, sweep -------------


class CountingRuns:
    """A trusted executor (our reference function, never student text) that counts its runs."""

    def __init__(self) -> None:
        from grader.engine import reference
        from grader.engine.executors.trusted import CallableExecutor

        self.inner = CallableExecutor(reference.attention)
        self.runs = 0

    def start(self, request):  # type: ignore[no-untyped-def]
        self.runs += 1
        return self.inner.start(request)

    def close(self) -> None:
        pass


@pytest.fixture
def no_publish(monkeypatch):  # type: ignore[no-untyped-def]
    """Record what the services would publish, instead of reaching for a broker."""
    sent: list[int] = []

    def enqueue(*, submission_id: int, countdown: float | None = None) -> bool:
        sent.append(submission_id)
        return True

    monkeypatch.setattr(services, "submission_enqueue", enqueue)
    return sent


def test_a_running_row_is_not_claimed_again_by_its_own_name_while_the_lease_holds(
    user, exercise
) -> None:  # type: ignore[no-untyped-def]
    # Two containers on one host have processes with the same host:pid; a duplicate delivery
    # reaching the other one must not start a second sandbox run.
    s = make(user, exercise)
    assert services.submission_claim(submission_id=s.pk, worker="host:4") is not None
    assert services.submission_claim(submission_id=s.pk, worker="host:4") is None
    s.refresh_from_db()
    assert s.attempts == 1


def test_worker_identities_differ_across_pid_namespaces_with_the_same_pid() -> None:
    import shutil
    import subprocess
    import sys

    from tests.pipeline.stack import ROOT

    if not shutil.which("unshare"):
        pytest.skip("unshare is not installed")
    # Each python is pid 1 of its own pid namespace, as the first process of a container is.
    argv = ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c"]
    code = "import os; from grader.worker import worker_identity as w; print(os.getpid(), w())"
    outs = [
        subprocess.run(
            [*argv, code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
        ).stdout.split()
        for _ in range(2)
    ]
    assert outs[0][0] == outs[1][0] == "1"
    assert outs[0][1] != outs[1][1]


def test_a_forked_process_gets_an_identity_of_its_own() -> None:
    import multiprocessing

    from grader.worker import worker_identity

    mine = worker_identity()
    with multiprocessing.get_context("fork").Pool(1) as pool:
        theirs = pool.apply(worker_identity)
    assert theirs != mine
    assert worker_identity() == mine  # stable within a process


def test_lease_renewal_extends_only_the_holders_lease(user, exercise) -> None:  # type: ignore[no-untyped-def]
    s = make(user, exercise)
    held = services.submission_claim(submission_id=s.pk, worker="w1:1:a")
    assert held is not None
    past = timezone.now() - timedelta(seconds=1)
    Submission.objects.filter(pk=s.pk).update(lease_expires_at=past)
    assert services.submission_lease_renew(submission=held)
    s.refresh_from_db()
    assert s.lease_expires_at > timezone.now()
    # Taken over (attempts bumped): the old holder's heartbeat matches nothing.
    Submission.objects.filter(pk=s.pk).update(lease_expires_at=past)
    taker = services.submission_claim(submission_id=s.pk, worker="w2:2:b")
    assert taker is not None
    before = Submission.objects.get(pk=s.pk).lease_expires_at
    assert not services.submission_lease_renew(submission=held)
    assert Submission.objects.get(pk=s.pk).lease_expires_at == before


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@override_settings(GRADER_LEASE_SECONDS=1.0, GRADER_HEARTBEAT_SECONDS=0.05)
def test_the_heartbeat_renews_the_lease_while_the_block_runs() -> None:
    from tests.pipeline.stack import wait_until

    user = student_create(username="beat", password="pw-beat-12345")
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    s = make(user, exercise)
    held = services.submission_claim(submission_id=s.pk, worker="w1:1:a")
    assert held is not None
    first = held.lease_expires_at

    def lease() -> object:
        return Submission.objects.get(pk=s.pk).lease_expires_at

    with services.submission_lease_kept(submission=held):
        wait_until(lambda: lease() > first, timeout=10, step=0.02)
    # The 1 s lease outlived by renewals: no other worker could take the row meanwhile.
    assert services.submission_claim(submission_id=s.pk, worker="w2:2:b") is None


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@override_settings(GRADER_HEARTBEAT_SECONDS=0.02, CELERY_TASK_TIME_LIMIT=0)
def test_the_heartbeat_stops_renewing_past_the_hard_time_limit() -> None:
    import time

    user = student_create(username="wedged", password="pw-wedged-12345")
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    s = make(user, exercise)
    held = services.submission_claim(submission_id=s.pk, worker="w1:1:a")
    assert held is not None
    with services.submission_lease_kept(submission=held):
        time.sleep(0.3)  # some fifteen heartbeat intervals: a wedged grade
    # Its lease was left to run out, so the sweeper can hand the row to a live worker.
    assert Submission.objects.get(pk=s.pk).lease_expires_at == held.lease_expires_at


def test_a_database_error_after_grading_retries_the_write_not_the_grade(
    user, exercise, monkeypatch, no_publish
) -> None:  # type: ignore[no-untyped-def]
    from django.db import OperationalError

    monkeypatch.setattr(services, "VERDICT_WRITE_DELAYS", (0.0, 0.0, 0.0, 0.0), raising=False)
    real_finish = services.submission_finish
    failures = iter([OperationalError("server closed the connection unexpectedly")])

    def flaky_finish(**kwargs):  # type: ignore[no-untyped-def]
        for error in failures:
            raise error
        return real_finish(**kwargs)

    monkeypatch.setattr(services, "submission_finish", flaky_finish)
    s = make(user, exercise)
    executor = CountingRuns()
    status = services.submission_grade(submission_id=s.pk, worker="w1:1:a", executor=executor)
    assert status == Submission.Status.PASSED
    assert executor.runs == 1  # graded once; only the write was tried again
    s.refresh_from_db()
    assert (s.status, s.attempts, s.lease_expires_at) == (Submission.Status.PASSED, 1, None)
    assert no_publish == []


def test_a_grade_that_cannot_store_its_verdict_releases_the_row(
    user, exercise, monkeypatch, no_publish
) -> None:  # type: ignore[no-untyped-def]
    from django.db import OperationalError

    monkeypatch.setattr(services, "VERDICT_WRITE_DELAYS", (0.0, 0.0), raising=False)

    def broken_finish(**kwargs):  # type: ignore[no-untyped-def]
        raise OperationalError("database is locked")

    monkeypatch.setattr(services, "submission_finish", broken_finish)
    s = make(user, exercise)
    executor = CountingRuns()
    assert services.submission_grade(submission_id=s.pk, worker="w1:1:a", executor=executor) is None
    s.refresh_from_db()
    # Handed back at once (and published again), not held until its lease runs out.
    assert s.status == Submission.Status.QUEUED
    assert s.lease_expires_at is None
    assert no_publish == [s.pk]
    assert services.submission_claim(submission_id=s.pk, worker="w2:2:b") is not None


def test_an_error_after_the_claim_releases_the_row(user, exercise, monkeypatch, no_publish) -> None:  # type: ignore[no-untyped-def]
    from django.db import OperationalError

    from grader.selectors import exercises as selectors

    def spec_unreadable(**kwargs):  # type: ignore[no-untyped-def]
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(selectors, "exercise_spec_for_grading", spec_unreadable)
    s = make(user, exercise)
    with pytest.raises(OperationalError):  # the task's own retry takes it from here
        services.submission_grade(submission_id=s.pk, worker="w1:1:a", executor=CountingRuns())
    s.refresh_from_db()
    assert s.status == Submission.Status.QUEUED
    assert services.submission_claim(submission_id=s.pk, worker="w1:1:b") is not None


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
    first = services.submissions_sweep(now=now)
    second = services.submissions_sweep(now=now)  # a second beat, same moment
    assert (first.requeued, second.requeued) == (2, 0)
    assert sorted(no_publish) == sorted([stale.pk, expired.pk])
    expired.refresh_from_db()
    assert expired.status == Submission.Status.QUEUED
    # The dead holder is fenced: neither its heartbeat nor its verdict lands.
    dead = Submission(pk=expired.pk, attempts=1, worker="dead:7:a")
    assert not services.submission_lease_renew(submission=dead)
    assert not services.submission_finish(submission=dead, verdict={"status": "failed"})


@override_settings(GRADER_REQUEUE_AFTER_SECONDS=10)
def test_the_sweep_stops_publishing_when_the_broker_is_away(user, exercise, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[int] = []

    def enqueue(*, submission_id: int, countdown: float | None = None) -> bool:
        calls.append(submission_id)
        return False

    monkeypatch.setattr(services, "submission_enqueue", enqueue)
    old = timezone.now() - timedelta(seconds=60)
    for _ in range(3):
        make(user, exercise, queued_at=old)
    services.submissions_sweep()
    assert len(calls) == 1  # not one publish timeout per row


def test_one_heartbeat_thread_serves_every_grade_of_a_process(user, exercise) -> None:  # type: ignore[no-untyped-def]
    # A thread per grade cost more than the grade's judging: grades only register with it.
    def heartbeats() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("lease")]

    for _ in range(3):
        s = make(user, exercise)
        held = services.submission_claim(submission_id=s.pk, worker="w1:1:a")
        assert held is not None
        with services.submission_lease_kept(submission=held):
            assert len(heartbeats()) == 1
        services.submission_finish(submission=held, verdict={"status": "passed"})
    assert len(heartbeats()) == 1


def test_a_worker_reads_an_exercises_checks_again_only_after_a_change(exercise) -> None:  # type: ignore[no-untyped-def]
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from grader.selectors.exercises import exercise_spec_for_grading

    first = exercise_spec_for_grading(exercise=Exercise.objects.get(pk=exercise.pk))
    with CaptureQueriesContext(connection) as queries:
        again = exercise_spec_for_grading(exercise=exercise)
    assert again is first and len(queries) == 0

    check = exercise.checks.first()
    check.weight = 7.0
    check.save()  # moves the exercise's updated_at: the spec held is stale
    changed = exercise_spec_for_grading(exercise=Exercise.objects.get(pk=exercise.pk))
    assert changed.checks[0].weight == 7.0
    check.delete()
    after_delete = exercise_spec_for_grading(exercise=Exercise.objects.get(pk=exercise.pk))
    assert len(after_delete.checks) == len(changed.checks) - 1
