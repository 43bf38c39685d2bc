"""The pipeline under faults, with a real Redis and a real Celery worker (never eager mode)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest
from django.db import connection
from rest_framework.test import APIClient

from grader.models import Submission
from grader.worker import worker_pid
from tests.factories import instructor_create, student_create
from tests.pipeline.stack import Beat, Redis, Worker, golden, sandbox_runs, submit, wait_until

pytestmark = [
    pytest.mark.stack,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

CORRECT = golden("correct_matmul")
# Correct, but slow enough on its first call that a test can kill the worker mid-grade.
SLOW_CORRECT = "import time\n_slept = []\n" + CORRECT.replace(
    "def attention(Q, K, V, mask=None):\n",
    "def attention(Q, K, V, mask=None):\n    if not _slept:\n        _slept.append(1)\n"
    "        time.sleep(1.5)\n",
)
assert "time.sleep" in SLOW_CORRECT  # the golden file still has the line the sleep hooks onto
FINAL = {s.value for s in Submission.FINAL_STATUSES}


def final(submission_id: int, timeout: float = 60) -> Submission:
    def done() -> Submission | None:
        s = Submission.objects.get(pk=submission_id)
        return s if s.status in FINAL else None

    return wait_until(done, timeout=timeout, step=0.2)  # type: ignore[return-value]


def running_pid(submission_id: int) -> int:
    def pid() -> int | None:
        s = Submission.objects.get(pk=submission_id)
        if s.status == Submission.Status.RUNNING and s.worker:
            return worker_pid(s.worker)
        return None

    return wait_until(pid, timeout=30, step=0.05)  # type: ignore[return-value]


def postgresql_restart() -> None:
    """Restart the PostgreSQL server (this machine kind manages it with pg_ctlcluster)."""
    versions = sorted(os.listdir("/etc/postgresql")) if os.path.isdir("/etc/postgresql") else []
    if not versions or not shutil.which("pg_ctlcluster"):
        # Elsewhere: drop every other connection, which is what clients see of a restart.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        return
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1], "main", "restart"],
        check=True,
        timeout=60,
    )
    connection.close()  # ours died with the server; the next query reconnects


@pytest.fixture
def client() -> APIClient:
    user = student_create(username="alice", password="pw-alice-123")
    c = APIClient()
    c.force_authenticate(user)
    return c


def test_api_submission_is_graded_by_a_real_worker(worker: Worker, client: APIClient) -> None:
    sid = submit(client, CORRECT)
    s = final(sid)
    assert s.status == Submission.Status.PASSED, (s.message, s.checks)
    assert s.score == 1.0
    assert s.attempts == 1
    assert s.received_at <= s.queued_at <= s.started_at <= s.finished_at
    assert s.worker
    body = client.get(f"/api/submissions/{sid}/").json()
    assert body["status"] == "passed"
    assert body["diagnosis"] == []


def test_kill_9_of_the_worker_child_mid_grade_ends_in_one_clean_verdict(
    redis_server: Redis, client: APIClient
) -> None:
    w = Worker("kill9")
    w.start()  # the test clocks: a 5 s lease, so the killed grade is taken over quickly
    try:
        clean = final(submit(client, CORRECT))
        sid = submit(client, SLOW_CORRECT)
        os.kill(running_pid(sid), signal.SIGKILL)
        s = final(sid)
    finally:
        w.stop()
    assert s.status == Submission.Status.PASSED
    assert s.attempts == 2  # the killed delivery, then exactly one grade that wrote
    assert [c["passed"] for c in s.checks] == [c["passed"] for c in clean.checks]
    assert s.score == clean.score


def test_redis_restarted_with_its_queue_lost(redis_server: Redis, client: APIClient) -> None:
    # No worker yet: the messages sit in Redis, then Redis dies and loses them.
    ids = [submit(client, CORRECT) for _ in range(3)]
    redis_server.restart()
    w = Worker("after-restart")
    w.start()
    try:
        verdicts = [final(i) for i in ids]
    finally:
        w.stop()
    assert [v.status for v in verdicts] == [Submission.Status.PASSED] * 3


def test_redis_down_while_submitting(redis_server: Redis, client: APIClient) -> None:
    redis_server.stop()
    try:
        sid = submit(client, CORRECT)  # accepted and stored, though nothing can be published
        assert Submission.objects.get(pk=sid).status == Submission.Status.QUEUED
    finally:
        redis_server.start()
    w = Worker("redis-back")
    w.start()
    try:
        assert final(sid).status == Submission.Status.PASSED
    finally:
        w.stop()


def test_poison_submission_ends_as_internal_error_and_the_worker_serves_others(
    redis_server: Redis, client: APIClient
) -> None:
    w = Worker("poison")
    w.start()
    poison = submit(client, SLOW_CORRECT.replace("_slept = []", "_slept = []  # poison"))
    stop = threading.Event()

    def assassin() -> None:
        try:
            kill_every_grade_of_the_poison()
        finally:
            connection.close()  # this thread's own connection, before the test db is flushed

    def kill_every_grade_of_the_poison() -> None:
        # Kill whichever pool child picks the poison up, every time, like a crashing grade.
        seen: set[tuple[int, int]] = set()
        while not stop.is_set():
            s = Submission.objects.get(pk=poison)
            if s.status in FINAL:
                return
            if s.status == Submission.Status.RUNNING and s.worker:
                pid = worker_pid(s.worker)
                if (pid, s.attempts) not in seen:
                    seen.add((pid, s.attempts))
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            stop.wait(0.05)

    killer = threading.Thread(target=assassin, daemon=True)
    killer.start()
    try:
        s = final(poison, timeout=120)
        stop.set()
        killer.join(5)
        assert s.status == Submission.Status.INTERNAL_ERROR
        assert s.score is None  # never charged to the student
        # Three deliveries ran and died; a redelivered duplicate may claim it once more, only to
        # find the cap reached and close it without running it.
        assert s.attempts >= 3
        after = final(submit(client, CORRECT))
        assert after.status == Submission.Status.PASSED, (after.status, after.message)
    finally:
        stop.set()
        w.stop()


def test_database_trouble_mid_grade_is_retried_to_one_verdict(
    redis_server: Redis, client: APIClient
) -> None:
    """SQLite locked for a moment, or the PostgreSQL server restarted, mid-grade."""
    w = Worker("db-trouble")
    w.start()
    try:
        sid = submit(client, SLOW_CORRECT)
        running_pid(sid)
        if connection.vendor == "sqlite":
            import sqlite3

            locker = sqlite3.connect(connection.settings_dict["NAME"], timeout=30)
            try:
                locker.execute("BEGIN EXCLUSIVE")  # every other reader and writer now waits
                time.sleep(3.0)  # the worker finishes its grade and meets the lock
            finally:
                locker.close()
        else:
            postgresql_restart()
        s = final(sid)
    finally:
        w.stop()
    assert s.status == Submission.Status.PASSED
    assert s.score == 1.0


def test_a_regrade_preview_is_computed_by_a_worker(worker: Worker, client: APIClient) -> None:
    from django.test import Client

    from grader.models import RegradePreview

    final(submit(client, CORRECT))
    # An instructor: regrading needs its permission.
    staff = instructor_create(username="boss", password="pw-boss-123")
    web = Client()
    web.force_login(staff)
    web.post("/staff/exercises/scaled-dot-product-attention/regrade/", {"action": "preview"})
    preview = wait_until(
        lambda: RegradePreview.objects.filter(status=RegradePreview.Status.DONE).first(),
        timeout=60,
    )
    assert (preview.graded, preview.changes) == (1, [])  # type: ignore[attr-defined]


# --- the eight outside fault scenarios, in the project's own tests ------------------

# The acceptance bounds. Both are generous ceilings, not expectations: the measured
# figures are in the README (a submit answers in a few ms with Redis down; a killed worker's
# submission is graded again about 20 s later with the default 15 s lease and 5 s sweep).
ANSWER_WHILE_REDIS_DOWN_SECONDS = 0.3
# What no request may take even once: the defect answered in 5-6 s (kombu's connect retries).
# Below it, one request of the ten may lose a few hundred ms to the machine, not to Redis: in
# a fresh-clone CI run one took 489 ms while the nine others took 108-110 ms (a hung Redis
# costs each the 100 ms publish timeout), not reproduced in twelve runs on their own.
ANSWER_WHILE_REDIS_DOWN_CEILING_SECONDS = 2.0
REGRADE_AFTER_WORKER_DEATH_SECONDS = 30.0


def other_client(name: str) -> APIClient:
    user = student_create(username=name, password=f"pw-{name}-123")
    c = APIClient()
    c.force_authenticate(user)
    return c


def test_two_workers_in_separate_pid_namespaces_never_grade_one_submission_twice(
    redis_server: Redis, client: APIClient
) -> None:
    """Two containers on one host: same host:pid identities, one queue, duplicate deliveries."""
    from grader.services.submitting import submission_enqueue

    a, b = Worker("pidns-a"), Worker("pidns-b")
    beats = [Beat("pidns-beat-1"), Beat("pidns-beat-2")]  # two beats at once, as outside
    # No embedded beat: then both workers start their processes in the same order, and their
    # grading processes have the same pid, each in its own namespace.
    a.start(pid_namespace=True, beat=False)
    b.start(pid_namespace=True, beat=False)
    for beat in beats:
        beat.start()
    try:
        ids = []
        for c in (client, other_client("bea")):
            for _ in range(4):
                ids.append(submit(c, SLOW_CORRECT))
                # Two duplicates right behind it, so one reaches the other worker mid-grade.
                submission_enqueue(submission_id=ids[-1])
                submission_enqueue(submission_id=ids[-1])
        verdicts = [final(sid, timeout=120) for sid in ids]
    finally:
        for process in (a, b, *beats):
            process.stop()
    assert [v.status for v in verdicts] == [Submission.Status.PASSED] * len(ids)
    assert [v.attempts for v in verdicts] == [1] * len(ids)
    # Counted in the workers' logs, not the rows: one sandbox run per submission.
    assert [sandbox_runs(sid, a, b) for sid in ids] == [1] * len(ids)
    # The scenario is the real one: both workers graded, in processes with the same host:pid.
    host_pids = {":".join(v.worker.split(":")[:2]) for v in verdicts}
    assert len({v.worker for v in verdicts}) == 2 and len(host_pids) == 1, host_pids


@contextlib.contextmanager
def verdict_write_fails_once() -> Iterator[None]:
    """Make the database refuse the first write of a verdict (status leaving queued/running)."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            # RAISE(FAIL) keeps the budget's decrement made earlier in the same statement.
            cursor.execute("CREATE TABLE fault_budget (n INTEGER)")
            cursor.execute("INSERT INTO fault_budget VALUES (1)")
            cursor.execute(
                "CREATE TRIGGER fault_after_grading BEFORE UPDATE OF status ON grader_submission "
                "WHEN NEW.status NOT IN ('queued', 'running') "
                "AND (SELECT n FROM fault_budget) > 0 BEGIN "
                "UPDATE fault_budget SET n = n - 1; "
                "SELECT RAISE(FAIL, 'injected: database error after grading'); END"
            )
        else:
            # A sequence is not rolled back with the failed statement: it counts the faults.
            cursor.execute("CREATE SEQUENCE fault_budget")
            cursor.execute(
                "CREATE FUNCTION fault_after_grading() RETURNS trigger AS $$ BEGIN "
                "IF nextval('fault_budget') <= 1 THEN "
                "RAISE EXCEPTION 'injected: database error after grading'; END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql"
            )
            cursor.execute(
                "CREATE TRIGGER fault_after_grading BEFORE UPDATE ON grader_submission "
                "FOR EACH ROW WHEN (NEW.status NOT IN ('queued', 'running')) "
                "EXECUTE FUNCTION fault_after_grading()"
            )
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                cursor.execute("DROP TRIGGER IF EXISTS fault_after_grading")
                cursor.execute("DROP TABLE IF EXISTS fault_budget")
            else:
                cursor.execute("DROP TRIGGER IF EXISTS fault_after_grading ON grader_submission")
                cursor.execute("DROP FUNCTION IF EXISTS fault_after_grading()")
                cursor.execute("DROP SEQUENCE IF EXISTS fault_budget")


def test_a_database_error_after_grading_stores_the_verdict_without_grading_again(
    redis_server: Redis, client: APIClient
) -> None:
    w = Worker("write-fails")
    with verdict_write_fails_once():
        w.start()
        try:
            sid = submit(client, CORRECT)
            s = final(sid)
        finally:
            w.stop()
    assert s.status == Submission.Status.PASSED
    assert s.attempts == 1  # no second claim
    assert sandbox_runs(sid, w) == 1  # the verdict was written, not recomputed
    assert "storing the verdict failed; trying again" in w.output()


def test_a_worker_killed_mid_grade_is_graded_again_within_30_s_with_default_settings(
    redis_server: Redis, client: APIClient
) -> None:
    # The shipped clocks (15 s lease renewed every 5 s, a sweep every 5 s), not the test ones.
    workers = [Worker("default-a"), Worker("default-b")]
    for w in workers:
        w.start(defaults=True)
    try:
        sid = submit(client, SLOW_CORRECT)
        pid = running_pid(sid)
        (victim,) = (w for w in workers if w.owns(pid))
        victim.stop()  # kill -9 of the whole worker mid-grade: its message is unacked
        killed_at = time.monotonic()
        s = final(sid, timeout=90)
        recovered_after = time.monotonic() - killed_at
    finally:
        for w in workers:
            w.stop()
    assert s.status == Submission.Status.PASSED
    assert s.attempts == 2
    print(f"re-graded {recovered_after:.1f} s after the kill")  # the README's figure
    # The acceptance bound (see the constant); the row used to wait out 120 s.
    assert recovered_after < REGRADE_AFTER_WORKER_DEATH_SECONDS


@pytest.mark.parametrize("fault", ["down", "hung"])
def test_submitting_while_redis_is_away_answers_at_once_and_all_are_graded_later(
    redis_server: Redis, client: APIClient, fault: str
) -> None:
    """Redis killed (connections refused) or stopped with SIGSTOP (accepts, never answers)."""
    assert client.get("/api/submissions/").status_code == 200  # warm: URLconf, serializers
    assert redis_server.proc is not None
    if fault == "down":
        redis_server.stop()
    else:
        redis_server.proc.send_signal(signal.SIGSTOP)
    ids, answered_in = [], []
    try:
        for c in (client, other_client(f"carl-{fault}")):
            for _ in range(5):  # the per-user cap
                started = time.monotonic()
                ids.append(submit(c, CORRECT))
                answered_in.append(time.monotonic() - started)
    finally:
        if fault == "down":
            redis_server.start()
        else:
            redis_server.proc.send_signal(signal.SIGCONT)
    assert {s.status for s in Submission.objects.filter(pk__in=ids)} == {"queued"}
    print("answers while Redis was", fault, sorted(round(t * 1000) for t in answered_in), "ms")
    # The acceptance bound (see the constants): every request but at most one, which
    # must still be far from the defect's seconds.
    assert sorted(answered_in)[-2] < ANSWER_WHILE_REDIS_DOWN_SECONDS, answered_in
    assert max(answered_in) < ANSWER_WHILE_REDIS_DOWN_CEILING_SECONDS, answered_in
    w = Worker(f"redis-{fault}-back")
    w.start()
    try:
        verdicts = [final(sid, timeout=120) for sid in ids]
    finally:
        w.stop()
    assert [v.status for v in verdicts] == [Submission.Status.PASSED] * len(ids)


def test_sweeps_published_while_no_worker_runs_expire_instead_of_piling_up(
    redis_server: Redis,
) -> None:
    import re

    sent = "Sending due task"
    dropped = "Discarding revoked task: grader.sweep_submissions["
    beat = Beat()
    beat.start()  # a sweep every second (the test clocks), and no worker to run them
    try:
        wait_until(lambda: beat.output().count(sent) >= 8, timeout=60)
        backlog = beat.output().count(sent)
        w = Worker("after-sweeps")
        w.start(beat=False)
        try:
            wait_until(lambda: dropped in w.output(), timeout=30)
            time.sleep(3)  # a few live sweeps run meanwhile
            log = w.output()
            sent_in_all = beat.output().count(sent)
        finally:
            w.stop()
    finally:
        beat.stop()
    ran = len(re.findall(r"Task grader\.sweep_submissions\[\S+\] succeeded", log))
    # The backlog was dropped unrun (the newest of it may still have been fresh), and only
    # sweeps sent since ran. Before, every sweep queued while no worker ran was run back to back.
    assert log.count(dropped) >= backlog - 1, log
    assert ran <= sent_in_all - backlog + 1, log
