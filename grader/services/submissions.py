"""Writes of the submission pipeline.

browser/API -> submission_create (row, then enqueue on commit, id only) -> worker task ->
submission_claim (conditional update, a short lease) -> sandbox computes outputs while a
heartbeat renews the lease -> trusted checks judge them -> submission_finish (only the claim's
holder writes; the write, not the grade, is retried) -> the page polls the row.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import secrets
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, InterfaceError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from common.ratelimit import rate_limit_hit
from grader.engine.executors.extra import ExtraCallsExecutor
from grader.engine.limits import CODE_MAX_BYTES
from grader.models import Exercise, Submission
from grader.publish import GRADE_SUBMISSION, task_publish
from grader.services.regrades import regrade_notice_record
from quizsite.rows import Columns, columns, row_get

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from grader.engine.executors import Executor
    from grader.engine.grading import ExerciseSpec, Plan

log = logging.getLogger(__name__)

MSG_CODE_EMPTY = "Your code is empty. Paste or write a function, then submit."
MSG_CODE_UNCHANGED = (
    "This is the starter code, unchanged: it was not submitted and does not count. "
    "Write your function in the editor, then submit."
)
MSG_CODE_TOO_LARGE = (
    f"Your code is larger than {CODE_MAX_BYTES // 1024} KiB. "
    "Submit only the function and what it needs."
)
MSG_TOO_MANY_QUEUED = (
    "You already have {n} submissions waiting to be graded. "
    "Wait for them to finish, then submit again."
)
MSG_QUEUE_FULL = (
    "The grader is very busy right now. Please try again in a minute; nothing was lost."
)
MSG_SUBMIT_THROTTLED = "Too many submissions in a short time. Wait {wait} seconds and submit again."
MSG_EXERCISE_UNAVAILABLE = "This exercise is not open for submissions."
MSG_INTERNAL_ERROR = (
    "The grader failed on our side, not yours. This submission is not counted against you; "
    "please submit again later."
)
MSG_GRADING_AGAIN = "The grader hit a problem on our side; your submission will be graded again."


class SubmissionRejected(Exception):
    """A submission that can't be accepted, with a message for the user and an HTTP status."""

    def __init__(
        self, message: str, *, status_code: int = 400, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.retry_after = retry_after


_WAITING = (Submission.Status.QUEUED, Submission.Status.RUNNING)


def is_starter_code(*, code: str, starter_code: str) -> bool:
    """Is ``code`` the exercise's starter code, whatever its whitespace and line endings?

    Grading it only fails (it is a stub) and counts an attempt against the student: a keyboard
    user who never reached the editor's text submits exactly this. Whitespace alone does not
    make it the student's own code (an editor or a paste may change indentation, trailing
    spaces, CRLF line endings).
    """
    return bool(starter_code.strip()) and code.split() == starter_code.split()


def submission_create(
    *, user: AbstractBaseUser, exercise: Exercise, code: str, now: Any = None
) -> Submission:
    if not exercise.is_published:
        raise SubmissionRejected(MSG_EXERCISE_UNAVAILABLE, status_code=404)
    if not code.strip():
        raise SubmissionRejected(MSG_CODE_EMPTY)
    if len(code.encode()) > CODE_MAX_BYTES:
        raise SubmissionRejected(MSG_CODE_TOO_LARGE, status_code=413)
    # Before the rate limit and the row: a refused starter code is neither stored nor counted.
    if is_starter_code(code=code, starter_code=exercise.starter_code):
        raise SubmissionRejected(MSG_CODE_UNCHANGED)
    # One limit per user whatever the path: the page's form and the API both come here.
    wait = rate_limit_hit(
        scope="submissions", ident=str(user.pk), rate=settings.THROTTLE_RATES["submissions"]
    )
    if wait is not None:
        raise SubmissionRejected(
            MSG_SUBMIT_THROTTLED.format(wait=int(wait)), status_code=429, retry_after=int(wait)
        )
    now = now or timezone.now()
    with transaction.atomic():
        # Race: two submits of one user at once would both count 4 waiting rows and both pass
        # a cap of 5. Locking the user's row makes them count one after the other (on SQLite,
        # IMMEDIATE transactions already serialise writers).
        _user_lock(user_id=user.pk)
        # One read of the user's recent rows gives both their waiting count (the cap) and
        # the new submission's fair-share priority (all their waiting rows are ahead of it).
        mine = _user_recent_rows(user_id=user.pk, now=now)
        cap = settings.GRADER_MAX_QUEUED_PER_USER
        if sum(status in _WAITING for _, status, _, _ in mine) >= cap:
            raise SubmissionRejected(MSG_TOO_MANY_QUEUED.format(n=cap), status_code=429)
        priority = _priority_of(mine, now=now) if settings.GRADER_FAIR_SHARE_PRIORITIES else None
        waiting, ahead = _waiting_and_ahead(priority=priority or 0, now=now)
        if waiting >= settings.GRADER_MAX_QUEUED_TOTAL:
            raise SubmissionRejected(MSG_QUEUE_FULL, status_code=429)
        submission = Submission.objects.create(
            user=user,
            exercise=exercise,
            code=code,
            status=Submission.Status.QUEUED,
            # The seed of the hidden inputs is drawn by the worker that first claims the row
            # (see submission_claim), then stored: any rerun replays the same verdict.
            seed=Submission.SEED_UNDRAWN,
            received_at=now,
            queued_at=now,
            # Stored with the row (the queue position counts in the broker's order).
            priority=priority or 0,
        )
        submission.queue_position_at_insert = ahead + 1
        # Publish only once the row is committed: a worker must never receive an id it can't
        # read. If the publish fails (Redis down), the sweeper finds the row still queued.
        submission_id = submission.pk
        transaction.on_commit(
            lambda: submission_enqueue(submission_id=submission_id, priority=priority)
        )
    return submission


# --- Fair share: the grade task's priority --------------------------------------------------
# kombu's Redis transport serves priority 0 first and 9 last (grader/publish.py).
FAIR_SHARE_PRIORITY_MAX = 9


def fair_share_priority(*, sandbox_seconds: float, waiting_ahead: int) -> int:
    """0 (served first) to 9 from a user's recent sandbox seconds and their own earlier waiting
    submissions.

    Seconds count on a log scale, one step per doubling of GRADER_FAIR_SHARE_STEP_SECONDS
    (under one step: 0), so the 5 s of one CPU-burning submission already put a user behind a
    student whose grades take milliseconds. Seconds alone know nothing of a burst queued this
    instant (none has run yet), so each of the user's earlier waiting submissions adds one
    step too: a user's n-th waiting submission goes behind everyone's first, which is close to
    round-robin between users.
    """
    step = settings.GRADER_FAIR_SHARE_STEP_SECONDS
    level = 0 if sandbox_seconds < step else 1 + math.floor(math.log2(sandbox_seconds / step))
    return min(FAIR_SHARE_PRIORITY_MAX, level + waiting_ahead)


def submission_priority(*, submission_id: int, now: Any = None) -> int:
    """The grade task's priority for this submission: its user's recent share of the sandbox.

    One query on the (user, finished_at) index: the user's rows finished within
    GRADER_FAIR_SHARE_WINDOW_SECONDS and those not finished (queued or running, a handful:
    the queue cap), summed here rather than in SQL so SQLite and PostgreSQL agree.
    """
    now = now or timezone.now()
    # A join through the user, not a subquery: SQLite then searches the index by user_id
    # and the finished_at range (with a scalar subquery it skip-scanned every user).
    rows = _recent(Submission.objects.filter(user__submissions__pk=submission_id), now=now)
    return _priority_of(rows, now=now, before=submission_id)


Row = tuple[int, str, Any, Any]  # pk, status, started_at, finished_at


def _recent(rows: Any, *, now: Any) -> list[Row]:
    since = now - timedelta(seconds=settings.GRADER_FAIR_SHARE_WINDOW_SECONDS)
    return list(
        rows.filter(Q(finished_at__gte=since) | Q(finished_at__isnull=True))
        .order_by()
        .values_list("pk", "status", "started_at", "finished_at")
    )


@functools.cache
def _user_recent_sql() -> tuple[str, Columns]:
    """_recent of one user's rows, written out once per process (read at every submit)."""
    cols = columns(Submission, ["pk", "status", "started_at", "finished_at"])
    finished = _col("finished_at")
    sql = (
        f"SELECT {cols.sql} FROM {_table()} WHERE {_col('user')} = %s"  # noqa: S608
        f" AND ({finished} >= %s OR {finished} IS NULL)"
    )
    return sql, cols


def _user_recent_rows(*, user_id: int, now: Any) -> list[Row]:
    """The user's rows finished within GRADER_FAIR_SHARE_WINDOW_SECONDS and those not finished
    (queued or running: a handful, the queue cap), on the (user, finished_at) index: the rows
    of _recent, by a statement written out once per process."""
    sql, cols = _user_recent_sql()
    since = now - timedelta(seconds=settings.GRADER_FAIR_SHARE_WINDOW_SECONDS)
    with connection.cursor() as cursor:
        cursor.execute(sql, [user_id, connection.ops.adapt_datetimefield_value(since)])
        return [tuple(cols.convert(row)) for row in cursor.fetchall()]  # type: ignore[misc]


def _user_lock(*, user_id: int) -> None:
    """SELECT ... FOR UPDATE of the user's row, written out (the ORM's compile of it cost more
    than the statement); nothing where the database has no row locks (SQLite), whose
    IMMEDIATE transactions serialise writers already."""
    if not connection.features.has_select_for_update:
        return
    meta = get_user_model()._meta
    table, pk = connection.ops.quote_name(meta.db_table), connection.ops.quote_name(meta.pk.column)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {table} WHERE {pk} = %s FOR UPDATE", [user_id])  # noqa: S608


@functools.cache
def _waiting_and_ahead_sql() -> str:
    """The waiting rows (the queue cap's count) and the queued ones a new row of a priority
    goes behind (selectors.submissions.queued_ahead_of), in one statement written out once per
    process: the ORM's compile of it cost more than running it."""
    status, priority, queued_at = _col("status"), _col("priority"), _col("queued_at")
    return (
        f"SELECT COUNT(*), COALESCE(SUM(CASE WHEN {status} = %s AND ({priority} < %s OR "  # noqa: S608
        f"({priority} = %s AND {queued_at} < %s)) THEN 1 ELSE 0 END), 0) "
        f"FROM {_table()} WHERE {status} IN (%s, %s)"
    )


def _waiting_and_ahead(*, priority: int, now: Any) -> tuple[int, int]:
    queued, running = Submission.Status.QUEUED.value, Submission.Status.RUNNING.value
    stamp = connection.ops.adapt_datetimefield_value(now)
    with connection.cursor() as cursor:
        cursor.execute(
            _waiting_and_ahead_sql(), [queued, priority, priority, stamp, queued, running]
        )
        waiting, ahead = cursor.fetchone()
    return int(waiting), int(ahead)


def _priority_of(rows: Sequence[Row], *, now: Any, before: int | None = None) -> int:
    """The priority from a user's recent rows (summed here rather than in SQL so SQLite and
    PostgreSQL agree); the waiting rows ahead are those with a pk below ``before`` (all of
    them for a submission not yet created)."""
    seconds = 0.0
    waiting_ahead = 0
    for pk, status, started_at, finished_at in rows:
        if status == Submission.Status.RUNNING and started_at is not None:
            seconds += max(0.0, (now - started_at).total_seconds())  # the run so far counts
        elif finished_at is not None and started_at is not None:
            seconds += max(0.0, (finished_at - started_at).total_seconds())
        if (before is None or pk < before) and status in _WAITING:
            waiting_ahead += 1
    return fair_share_priority(sandbox_seconds=seconds, waiting_ahead=waiting_ahead)


def submission_enqueue(
    *, submission_id: int, countdown: float | None = None, priority: int | None = None
) -> bool:
    """Publish the grade task. ``priority``: already computed and stored (a new submission);
    otherwise it is computed now, from the user's share, and stored if it changed."""
    if priority is None and settings.GRADER_FAIR_SHARE_PRIORITIES:
        try:
            priority = submission_priority(submission_id=submission_id)
            # Kept for the queue position; written only when it changes (most are 0).
            Submission.objects.filter(pk=submission_id, status=Submission.Status.QUEUED).exclude(
                priority=priority
            ).update(priority=priority)
        except DatabaseError:  # never lose a publish over its priority: kombu's default (0)
            log.warning("submission %s: no fair-share priority", submission_id, exc_info=True)
    return task_publish(
        name=GRADE_SUBMISSION, args=(submission_id,), countdown=countdown, priority=priority
    )


def _col(name: str) -> str:
    """A Submission column, quoted, for the statements written out below: from the model, so a
    rename cannot silently miss them."""
    return connection.ops.quote_name(Submission._meta.get_field(name).column)


def _table() -> str:
    return connection.ops.quote_name(Submission._meta.db_table)


@functools.cache
def _claim_sql(*, one_running_per_user: bool) -> str:
    """The claim as one UPDATE statement, written out once per process.

    Written out because the ORM's compile of it (two Q branches, the fair-share subquery, an F
    expression) cost more CPU per claim than this statement and the read that follows together,
    a noticeable share of a grade (bench/worker.py; docs/performance.md). The table and columns
    come from the model, so a rename cannot silently miss it; the statement is plain SQL that
    SQLite and PostgreSQL both run.
    """
    table, col = _table(), _col
    status, lease, pk, seed = col("status"), col("lease_expires_at"), col("id"), col("seed")
    sql = (
        # Identifiers from the model, quoted; every value is a parameter.
        f"UPDATE {table} SET {status} = %s, {col('started_at')} = %s, {lease} = %s, "  # noqa: S608
        f"{col('attempts')} = {col('attempts')} + 1, {col('worker')} = %s, "
        # The first claim draws the seed: the one this worker prepared the inputs for.
        f"{seed} = CASE WHEN {seed} < 0 THEN %s ELSE {seed} END "
        f"WHERE {pk} = %s AND ({status} = %s OR ({status} = %s AND {lease} <= %s))"
    )
    if one_running_per_user:
        # Fair share: while one of a user's submissions runs (under a live lease), their others
        # wait, so three accounts burning CPU hold at most one worker slot each and everyone
        # else's submissions pass their queued ones (submission_grade re-publishes them).
        user = col("user")
        sql += (
            f" AND NOT EXISTS (SELECT 1 FROM {table} AS other WHERE other.{user} = {table}.{user}"  # noqa: S608
            f" AND other.{status} = %s AND other.{lease} > %s AND other.{pk} <> {table}.{pk})"
        )
    return sql


@functools.cache
def _held_update_sql(columns: tuple[str, ...]) -> str:
    """UPDATE of ``columns`` where the claim still holds the row (the fields of _held_fields),
    written out once per process like the claim: the ORM's compile of the verdict's write
    cost more than the statement itself."""
    sets = ", ".join(f"{_col(name)} = %s" for name in columns)
    held = " AND ".join(f"{_col(name)} = %s" for name in _HELD_FIELDS)
    return f"UPDATE {_table()} SET {sets} WHERE {held}"  # noqa: S608  (identifiers: the model)


def submission_claim(
    *, submission_id: int, worker: str, seed: int | None = None
) -> Submission | None:
    """Take the row for grading, or return None if someone else holds it or it is done.

    A row still without a seed gets ``seed`` (a fresh random one if None): the seed this
    worker prepared a grade's inputs for while idle (see _Plans).

    A single conditional UPDATE, not read-then-write: an acks_late redelivery, the sweeper's
    re-enqueue and the original message can reach two workers at once, and only one UPDATE can
    match. A running row is taken over only once its lease has expired, never because the
    claimant's name matches: a name is no proof of being the same live process.
    """
    now = timezone.now()
    stamp = connection.ops.adapt_datetimefield_value
    running, queued = Submission.Status.RUNNING.value, Submission.Status.QUEUED.value
    params: list[Any] = [
        running,
        stamp(now),
        stamp(now + timedelta(seconds=settings.GRADER_LEASE_SECONDS)),
        worker,
        secrets.randbits(31) if seed is None else seed,
        submission_id,
        queued,
        running,
        stamp(now),
    ]
    fair = settings.GRADER_ONE_RUNNING_PER_USER
    if fair:
        params += [running, stamp(now)]
    with connection.cursor() as cursor:
        cursor.execute(_claim_sql(one_running_per_user=fair), params)
        updated = cursor.rowcount
    if not updated:
        return None
    return row_get(Submission, lookup="pk", value=submission_id, related="exercise")


# The claim: ``attempts`` is the fencing token (a takeover bumps it), ``worker`` the holder.
_HELD_FIELDS = ("id", "status", "attempts", "worker")


def _held_fields(submission: Submission) -> dict[str, Any]:
    return {
        "id": submission.pk,
        "status": Submission.Status.RUNNING.value,
        "attempts": submission.attempts,
        "worker": submission.worker,
    }


def _held(submission: Submission) -> Q:
    return Q(**_held_fields(submission))


def submission_lease_renew(*, submission: Submission) -> bool:
    """Push the claim's lease forward; False if the claim is no longer ours."""
    # Conditional: a heartbeat arriving after a takeover must not extend the new holder's lease
    # on our behalf (it matches nothing: attempts changed).
    expires = timezone.now() + timedelta(seconds=settings.GRADER_LEASE_SECONDS)
    return bool(Submission.objects.filter(_held(submission)).update(lease_expires_at=expires))


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


def submission_finish(*, submission: Submission, verdict: dict[str, Any]) -> bool:
    """Store the verdict, only if this claim still holds the row.

    ``attempts`` is the fencing token: if our lease expired and another worker re-claimed the
    row, it bumped ``attempts`` and this late write matches nothing.
    """
    values = {
        "status": verdict["status"],
        "score": verdict.get("score"),
        "checks": verdict.get("checks", []),
        "diagnosis": verdict.get("diagnosis", []),
        "message": verdict.get("message", ""),
        "stdout": verdict.get("stdout", ""),
        "plots": verdict.get("plots", {}),
        "finished_at": timezone.now(),
        "lease_expires_at": None,
    }
    meta = Submission._meta
    # Each value adapted by its own field (JSON, datetimes), as the ORM's update would.
    params = [meta.get_field(name).get_db_prep_save(v, connection) for name, v in values.items()]
    params += list(_held_fields(submission).values())
    # A regraded verdict and its notice are one commit: the regrade's progress counts both, and
    # a poll between two commits read the regrade done with its notice uncounted.
    atomic = transaction.atomic() if submission.regrade_id is not None else nullcontext()
    with atomic:
        with connection.cursor() as cursor:
            cursor.execute(_held_update_sql(tuple(values)), params)
            updated = cursor.rowcount
        if not updated:
            log.warning("submission %s: lost the claim before writing the verdict", submission.pk)
        elif submission.regrade_id is not None:  # a regrade queued it: tell the student
            regrade_notice_record(submission=submission, verdict=verdict)
    return bool(updated)


def submission_release(*, submission: Submission) -> None:
    """Our fault (sandbox broke, worker unhealthy): requeue, or give up after the attempt cap."""
    if submission.attempts >= settings.GRADER_MAX_ATTEMPTS:
        submission_finish(
            submission=submission,
            verdict={"status": Submission.Status.INTERNAL_ERROR, "message": MSG_INTERNAL_ERROR},
        )
        return
    updated = Submission.objects.filter(_held(submission)).update(
        status=Submission.Status.QUEUED,
        queued_at=timezone.now(),
        lease_expires_at=None,
        message=MSG_GRADING_AGAIN,
    )
    if updated:
        submission_enqueue(submission_id=submission.pk, countdown=2.0 * submission.attempts)


def _submission_release_quietly(*, submission: Submission) -> None:
    # Hand the row back at once; if even that fails (the database is away), the lease, no
    # longer renewed, runs out within GRADER_LEASE_SECONDS and the sweeper requeues the row.
    try:
        submission_release(submission=submission)
    except (DatabaseError, InterfaceError):
        log.warning(
            "submission %s: could not release the claim; it frees itself when the lease ends",
            submission.pk,
        )


# The write of a computed verdict is retried, never the grade: a grade costs a sandbox run
# (and an attempt). Seconds between tries: 7.5 s in all, while the heartbeat keeps the lease.
VERDICT_WRITE_DELAYS = (0.5, 1.0, 2.0, 4.0)


def _submission_verdict_store(*, submission: Submission, verdict: dict[str, Any]) -> bool:
    for delay in (*VERDICT_WRITE_DELAYS, None):
        try:
            return submission_finish(submission=submission, verdict=verdict)
        except (DatabaseError, InterfaceError):
            if delay is None:
                raise
            log.warning(
                "submission %s: storing the verdict failed; trying again in %ss",
                submission.pk,
                delay,
                exc_info=True,
            )
            if not connection.in_atomic_block:
                connection.close()  # a connection the server dropped is replaced on next use
            time.sleep(delay)
    raise AssertionError("unreachable")  # the last delay is None: it returns or raises


class _Plans:
    """The next grade's hidden inputs, prepared by this worker process once a verdict is stored.

    The seed is drawn here and offered at the next claim, which stores it in a row without one
    (a new submission): the inputs and their reference outputs are then ready, and the grade
    skips planning (a tenth of a grade or more; while idle it costs nothing). Prepared for the
    exercise graded last: for another exercise, or its checks since edited, grade() plans as
    usual (it uses a plan only for the very spec and seed it was made for).
    """

    def __init__(self) -> None:
        self._pid = -1

    def _ensure(self) -> None:
        # Forked pool processes inherit this object: each draws its own seeds.
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._offer = secrets.randbits(31)
            self._plan: Plan | None = None
            self._spec: ExerciseSpec | None = None

    def offered(self) -> int:
        self._ensure()
        return self._offer

    def take(self, *, spec: ExerciseSpec, seed: int) -> Plan | None:
        self._ensure()
        self._spec = spec
        if seed != self._offer:
            return None  # the row had its seed already (a regrade, a retry)
        plan, self._plan = self._plan, None
        self._offer = secrets.randbits(31)  # used: the next claim offers another
        return plan

    def prepare(self) -> None:
        self._ensure()
        plan, spec = self._plan, self._spec
        if spec is None or (plan is not None and plan.spec is spec and plan.seed == self._offer):
            return
        from grader.engine.grading import grade_plan

        try:
            self._plan = grade_plan(spec=spec, seed=self._offer)
        except Exception:  # a check that cannot be prepared: the grade reports it itself
            self._plan = None


_plans = _Plans()


def submission_grade(*, submission_id: int, worker: str, executor: Executor | None) -> str | None:
    """Claim, grade through the sandbox, store. Returns the final status, or None if not ours."""
    submission = submission_claim(submission_id=submission_id, worker=worker, seed=_plans.offered())
    if submission is None:
        # Still queued, so not claimed only because another of its user's runs: back of the
        # queue, shortly (without this the sweeper would publish it GRADER_REQUEUE_AFTER later).
        if Submission.objects.filter(pk=submission_id, status=Submission.Status.QUEUED).exists():
            submission_enqueue(
                submission_id=submission_id, countdown=settings.GRADER_FAIR_SHARE_RETRY_SECONDS
            )
        return None
    try:
        with submission_lease_kept(submission=submission):
            verdict = _submission_verdict(submission=submission, executor=executor)
            if verdict is None:  # our side failed (no sandbox here, or it broke): elsewhere
                submission_release(submission=submission)
                return None
            try:
                _submission_verdict_store(submission=submission, verdict=verdict)
            except (DatabaseError, InterfaceError):
                log.error("submission %s: could not store its verdict; releasing", submission.pk)
                _submission_release_quietly(submission=submission)
                return None
        _plans.prepare()  # the verdict is out: the next one's inputs, before the next claim
        return verdict["status"]
    except BaseException:
        # Anything else that stops this grade (the soft time limit, the database failing
        # before the grade) hands the row back now, instead of holding it for a whole lease.
        _submission_release_quietly(submission=submission)
        raise


def _submission_verdict(
    *, submission: Submission, executor: Executor | None
) -> dict[str, Any] | None:
    """The verdict of one claimed submission (one sandbox run), or None if we failed it."""
    from grader.engine.grading import grade
    from grader.engine.plots import plot_calls, plots_from_results
    from grader.selectors.exercises import exercise_spec_for_grading

    if submission.attempts > settings.GRADER_MAX_ATTEMPTS:
        # Delivered again and again (it kills its worker, or the sandbox keeps failing).
        return {"status": Submission.Status.INTERNAL_ERROR, "message": MSG_INTERNAL_ERROR}
    if executor is None:  # the sandbox refused to start here: fail closed, try elsewhere
        return None
    exercise = submission.exercise
    spec = exercise_spec_for_grading(exercise=exercise)
    # The one line a fault test counts: sandbox runs per submission, not only verdicts.
    log.info(
        "submission %s: grading, attempt %s, in %s",
        submission.pk,
        submission.attempts,
        submission.worker,
    )
    # The pictures' hidden-free inputs ride along in the grade's one sandbox run.
    with_plots = ExtraCallsExecutor(executor, plot_calls(exercise.kind))
    result = grade(
        spec=spec,
        code=submission.code,
        seed=submission.seed,
        executor=with_plots,
        plan=_plans.take(spec=spec, seed=submission.seed),
    ).to_dict()
    if result["status"] == Submission.Status.INTERNAL_ERROR:
        return None
    if result["status"] != Submission.Status.ERROR and with_plots.extra_results:
        result["plots"] = plots_from_results(
            exercise.kind, with_plots.extra_results, diagnosis=result["diagnosis"]
        )
    return result


@dataclass(frozen=True)
class SweepReport:
    requeued: int
    abandoned: int


def submissions_sweep(*, now: Any = None) -> SweepReport:
    """Re-enqueue what a lost message or a dead worker left behind.

    Covers: a crash between commit and publish, Redis down at submit time, Redis restarted
    with its queue lost, and a worker killed mid-grade whose lease ran out (no heartbeat).

    Idempotent, so two beats (or a backlog of sweeps) may run it at once: every row is moved
    by a conditional UPDATE on what this sweep read, and only the sweep whose UPDATE matched
    publishes it.
    """
    now = now or timezone.now()
    stale_queued = Submission.objects.filter(
        status=Submission.Status.QUEUED,
        queued_at__lte=now - timedelta(seconds=settings.GRADER_REQUEUE_AFTER_SECONDS),
    ).values_list("pk", "queued_at")
    expired = Submission.objects.filter(
        status=Submission.Status.RUNNING, lease_expires_at__lte=now
    ).values_list("pk", "attempts")
    to_publish: list[int] = []
    abandoned = 0
    for submission_id, queued_at in stale_queued:
        # Race: another sweep read the same row; it bumped queued_at first, so it publishes.
        # The bump also makes the next sweep wait a full interval before publishing it again.
        if Submission.objects.filter(
            pk=submission_id, status=Submission.Status.QUEUED, queued_at=queued_at
        ).update(queued_at=now):
            to_publish.append(submission_id)
    for submission_id, attempts in expired:
        # Race: another sweep, or a late heartbeat of a slow (not dead) holder; matching on
        # attempts and the expired lease lets exactly one of them move the row.
        still_expired = Submission.objects.filter(
            pk=submission_id,
            status=Submission.Status.RUNNING,
            attempts=attempts,
            lease_expires_at__lte=now,
        )
        if attempts >= settings.GRADER_MAX_ATTEMPTS:
            # Its last attempt died without a verdict: stop, and never charge the student.
            abandoned += still_expired.update(
                status=Submission.Status.INTERNAL_ERROR,
                message=MSG_INTERNAL_ERROR,
                finished_at=now,
                lease_expires_at=None,
            )
        elif still_expired.update(
            status=Submission.Status.QUEUED, queued_at=now, lease_expires_at=None
        ):
            # Queued again: the dead holder is fenced (its verdict and heartbeat match nothing).
            to_publish.append(submission_id)
    published = 0
    for submission_id in to_publish:
        if not submission_enqueue(submission_id=submission_id):
            # The broker is away: the rest stay queued for a later sweep, rather than each
            # waiting out its own publish timeout now.
            break
        published += 1
    if to_publish or abandoned:
        log.info(
            "sweep: requeued %s (published %s), abandoned %s",
            len(to_publish),
            published,
            abandoned,
        )
    return SweepReport(requeued=len(to_publish), abandoned=abandoned)
