"""A worker process's lease heartbeat: one thread renews the leases of the grades it runs.

Part of the worker's runtime (grader.worker starts the sandbox, this keeps the claims);
grader.services.grading holds a claim here for the length of a grade.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import DatabaseError, InterfaceError, connection

from grader.models import Submission
from grader.services.queue import submission_lease_renew

log = logging.getLogger(__name__)


class _Heartbeat:
    """One thread per worker process renews the leases of the grades it runs.

    A thread started and joined per grade cost more than a whole grade's judging; this one is
    never woken by a grade either (waking it cost a GIL hand-over per grade). It ticks at
    least every GRADER_HEARTBEAT_SECONDS and renews each claim held for that long since its
    last renewal, so a claim is first renewed within two intervals of being taken: settings
    keep a lease above two intervals. It stops renewing a claim that is let go, lost (taken
    over or finished), or past the hard time limit: then the worker is wedged, and the row
    should go elsewhere.
    """

    def __init__(self) -> None:
        self._pid = -1

    def _ensure(self) -> None:
        # Forked pool processes inherit this object but not its thread: start one of their own.
        if self._pid == os.getpid():
            return
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._interval = settings.GRADER_HEARTBEAT_SECONDS
        # claim's pk -> [submission, next renewal, give up at] (monotonic seconds)
        self._held: dict[int, list[Any]] = {}
        threading.Thread(target=self._run, name="lease-heartbeat", daemon=True).start()

    def hold(self, submission: Submission) -> None:
        now = time.monotonic()
        with _HEARTBEAT_START:
            self._ensure()
        interval = settings.GRADER_HEARTBEAT_SECONDS
        with self._lock:
            self._held[submission.pk] = [
                submission,
                now + interval,
                now + settings.CELERY_TASK_TIME_LIMIT,
            ]
        if interval != self._interval:  # changed since the thread went to sleep (tests)
            self._wake.set()

    def release(self, submission: Submission) -> None:
        with self._lock:
            self._held.pop(submission.pk, None)

    def _run(self) -> None:
        while True:
            self._interval = interval = settings.GRADER_HEARTBEAT_SECONDS
            with self._lock:
                next_due = min((entry[1] for entry in self._held.values()), default=None)
            timeout = interval
            if next_due is not None:
                timeout = min(max(next_due - time.monotonic(), 0.0), interval)
            self._wake.wait(timeout)
            self._wake.clear()
            now = time.monotonic()
            with self._lock:
                due = [entry for entry in self._held.values() if entry[1] <= now]
            for entry in due:
                entry[1] = now + interval
                self._beat(entry, now)
            if due:
                connection.close()  # this thread's own: an idle worker holds no connection

    def _beat(self, entry: list[Any], now: float) -> None:
        submission, _, give_up_at = entry
        keep = False
        if now <= give_up_at:
            try:
                keep = submission_lease_renew(submission=submission)  # False: taken over
            except (DatabaseError, InterfaceError):
                # A database restart: the next beat reconnects; the lease has slack.
                log.warning("submission %s: heartbeat failed", submission.pk)
                connection.close()
                keep = True
        if not keep:
            with self._lock:
                if self._held.get(submission.pk) is entry:
                    del self._held[submission.pk]


_HEARTBEAT_START = threading.Lock()
_heartbeat = _Heartbeat()


@contextmanager
def submission_lease_kept(*, submission: Submission) -> Iterator[None]:
    """Renew the claim's lease every GRADER_HEARTBEAT_SECONDS while the block runs.

    The lease is short, so a row whose worker died is taken over within about a lease; the
    heartbeat keeps a live grade's row its own however long the grade takes.
    """
    _heartbeat.hold(submission)
    try:
        yield
    finally:
        _heartbeat.release(submission)
