"""The pipeline under faults, with a real Redis and a real Celery worker (never eager mode)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.test import APIClient

from grader.models import Submission
from tests.pipeline.stack import Redis, Worker, golden, wait_until

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


def submit(client: APIClient, code: str) -> int:
    response = client.post(
        "/api/submissions/",
        {"exercise": "scaled-dot-product-attention", "code": code},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


def final(submission_id: int, timeout: float = 60) -> Submission:
    def done() -> Submission | None:
        s = Submission.objects.get(pk=submission_id)
        return s if s.status in FINAL else None

    return wait_until(done, timeout=timeout, step=0.2)  # type: ignore[return-value]


def running_pid(submission_id: int) -> int:
    def pid() -> int | None:
        s = Submission.objects.get(pk=submission_id)
        if s.status == Submission.Status.RUNNING and s.worker:
            return int(s.worker.rsplit(":", 1)[1])
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
    user = get_user_model().objects.create_user("alice", password="pw-alice-123")
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
    # A short lease, so the killed grade is taken over quickly.
    w.start(lease_seconds=8)
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
    w.start(lease_seconds=8)
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
                pid = int(s.worker.rsplit(":", 1)[1])
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
    staff = get_user_model().objects.create_user("boss", password="pw-boss-123", is_staff=True)
    web = Client()
    web.force_login(staff)
    web.post("/staff/exercises/scaled-dot-product-attention/regrade/", {"action": "preview"})
    preview = wait_until(
        lambda: RegradePreview.objects.filter(status=RegradePreview.Status.DONE).first(),
        timeout=60,
    )
    assert (preview.graded, preview.changes) == (1, [])  # type: ignore[attr-defined]
