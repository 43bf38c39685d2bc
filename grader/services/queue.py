"""The queue's transitions of a submission row: claim, lease renewal, finish, release, sweep.

queued -> submission_claim (running, a short lease, the holder's name, attempts + 1) ->
submission_lease_renew while the grade runs (grader.heartbeat) -> submission_finish (the
verdict, a final status) or submission_release (queued again, or given up after the attempt
cap); submissions_sweep requeues what a lost message or a dead worker left behind.

Every transition is one conditional UPDATE (``TransitionQuerySet.transition``; the claim's is
written out, see _claim_sql): a row moves only from the state the caller read, so two workers,
two sweeps or a late heartbeat can never both move it. Grades nothing itself
(grader.services.grading does).
"""

from __future__ import annotations

import functools
import logging
import secrets
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from common.events import event_send_on_commit
from grader.engine.status import VerdictStatus
from grader.events import verdict_stored
from grader.models import Exercise, Submission
from grader.selectors.exercises import exercise_for_grading
from grader.services.regrades import regrade_notice_record
from grader.services.submitting import submission_enqueue

if TYPE_CHECKING:
    from grader.engine.grading import Verdict

log = logging.getLogger(__name__)

MSG_INTERNAL_ERROR = (
    "The grader failed on our side, not yours. This submission is not counted against you; "
    "please submit again later."
)
MSG_GRADING_AGAIN = "The grader hit a problem on our side; your submission will be graded again."


def verdict_internal_error() -> Verdict:
    """The verdict given when we failed a submission for good: never charged to the student."""
    from grader.engine.grading import Verdict

    return Verdict(status=VerdictStatus.INTERNAL_ERROR, score=0.0, message=MSG_INTERNAL_ERROR)


def submission_claim(
    *, submission_id: int, worker: str, seed: int | None = None
) -> Submission | None:
    """Take the row for grading, or return None if someone else holds it or it is done.

    A row still without a seed gets ``seed`` (a fresh random one if None): the seed this
    worker prepared a grade's inputs for while idle (grader.services.grading).

    A running row is taken over only once its lease has expired (Submission.objects.claimable);
    with GRADER_ONE_RUNNING_PER_USER, not while another row of its user runs.
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
    one_running_per_user = settings.GRADER_ONE_RUNNING_PER_USER
    if one_running_per_user:
        params += [running, stamp(now)]
    claimed = list(
        Submission.objects.raw(_claim_sql(one_running_per_user=one_running_per_user), params)
    )
    if not claimed:
        return None
    (submission,) = claimed
    submission.exercise = exercise_for_grading(
        exercise_id=submission.exercise_id, version=submission.exercise_version
    )
    return submission


@functools.cache
def _claim_sql(*, one_running_per_user: bool) -> str:
    """The claim: Submission.objects.claimable(...).transition(pk, ...) as the one statement of
    the project written out, once per process.

    Written out because the ORM's building and compiling of it (two Q branches, the fair-share
    subquery, a CASE and an F expression) cost several times the statement itself, on every
    grade, inside the claim-to-verdict time a student waits for (bench/worker.py,
    docs/performance.md). tests/pipeline/test_queue.py checks that it claims exactly the rows
    claimable() selects. Table and columns come from the model, so a rename cannot silently
    miss it; every value is a parameter; SQLite and PostgreSQL both run it as one conditional
    UPDATE, which keeps the claim race-free like every other transition. It returns the row it
    claimed and its exercise's version (``exercise_version``, updated_at as the database gives
    it), so a worker grading an exercise it holds reads nothing more before the grade.
    """
    quote = connection.ops.quote_name
    table = quote(Submission._meta.db_table)

    def col(name: str) -> str:
        return quote(Submission._meta.get_field(name).column)

    status, lease, pk, seed = col("status"), col("lease_expires_at"), col("id"), col("seed")
    sql = (
        f"UPDATE {table} SET {status} = %s, {col('started_at')} = %s, {lease} = %s, "  # noqa: S608
        f"{col('attempts')} = {col('attempts')} + 1, {col('worker')} = %s, "
        # The first claim draws the seed: the one this worker prepared the inputs for.
        f"{seed} = CASE WHEN {seed} < 0 THEN %s ELSE {seed} END "
        f"WHERE {pk} = %s AND ({status} = %s OR ({status} = %s AND {lease} <= %s))"
    )
    if one_running_per_user:
        user = col("user")
        sql += (
            f" AND NOT EXISTS (SELECT 1 FROM {table} AS other WHERE other.{user} = {table}.{user}"  # noqa: S608
            f" AND other.{status} = %s AND other.{lease} > %s AND other.{pk} <> {table}.{pk})"
        )
    exercise = Exercise._meta
    version = quote(exercise.get_field("updated_at").column)
    exercise_pk = quote(exercise.pk.column)
    # Every column by name: SQLite's RETURNING takes no "table.*".
    columns = ", ".join(quote(f.column) for f in Submission._meta.concrete_fields)
    returning = (
        f" RETURNING {columns}, (SELECT {version} FROM {quote(exercise.db_table)}"  # noqa: S608
        f" WHERE {exercise_pk} = {table}.{col('exercise')}) AS exercise_version"
    )
    return sql + returning


def submission_lease_renew(*, submission: Submission) -> bool:
    """Push the claim's lease forward; False if the claim is no longer ours (a heartbeat
    arriving after a takeover must not extend the new holder's lease on our behalf)."""
    expires = timezone.now() + timedelta(seconds=settings.GRADER_LEASE_SECONDS)
    return Submission.objects.held(submission).transition(submission.pk, lease_expires_at=expires)


def submission_finish(
    *, submission: Submission, verdict: Verdict, plots: dict[str, Any] | None = None
) -> bool:
    """Store the engine's verdict (and the pictures of the function), only if this claim still
    holds the row: if our lease expired and another worker re-claimed it, this late write
    matches nothing (Submission.objects.held)."""
    values = submission.verdict_apply(verdict, plots=plots)
    # A regraded verdict and its notice are one commit: the regrade's progress counts both, and
    # a poll between two commits read the regrade done with its notice uncounted.
    atomic = transaction.atomic() if submission.regrade_id is not None else nullcontext()
    with atomic:
        updated = Submission.objects.held(submission).transition(submission.pk, **values)
        if not updated:
            log.warning("submission %s: lost the claim before writing the verdict", submission.pk)
        elif submission.regrade_id is not None:  # a regrade queued it: tell the student
            regrade_notice_record(submission=submission)
    if updated:
        _verdict_stored_send(submission=submission)
    return updated


def _verdict_stored_send(*, submission: Submission) -> None:
    """Tell the apps above (courses) once the verdict is committed."""
    ids = {
        "submission_id": submission.pk,
        "user_id": submission.user_id,
        "exercise_id": submission.exercise_id,
    }
    event_send_on_commit(signal=verdict_stored, sender=Submission, **ids)


def submission_release(*, submission: Submission) -> None:
    """Our fault (sandbox broke, worker unhealthy): requeue, or give up after the attempt cap."""
    if submission.attempts >= settings.GRADER_MAX_ATTEMPTS:
        submission_finish(submission=submission, verdict=verdict_internal_error())
        return
    released = Submission.objects.held(submission).transition(
        submission.pk,
        status=Submission.Status.QUEUED,
        queued_at=timezone.now(),
        lease_expires_at=None,
        message=MSG_GRADING_AGAIN,
    )
    if released:
        submission_enqueue(submission_id=submission.pk, countdown=2.0 * submission.attempts)


@dataclass(frozen=True)
class SweepReport:
    requeued: int
    abandoned: int


def submissions_sweep(*, now: datetime | None = None) -> SweepReport:
    """Re-enqueue what a lost message or a dead worker left behind.

    Covers: a crash between commit and publish, Redis down at submit time, Redis restarted
    with its queue lost, and a worker killed mid-grade whose lease ran out (no heartbeat).

    Idempotent, so two beats (or a backlog of sweeps) may run it at once: every row is moved
    by a conditional UPDATE on what this sweep read, and only the sweep whose UPDATE matched
    publishes it.
    """
    now = now or timezone.now()
    stale_queued = (
        Submission.objects.queued()
        .filter(queued_at__lte=now - timedelta(seconds=settings.GRADER_REQUEUE_AFTER_SECONDS))
        .values_list("pk", "queued_at")
    )
    expired = Submission.objects.lease_expired(now=now).values_list("pk", "attempts")
    to_publish: list[int] = []
    abandoned = 0
    for submission_id, queued_at in stale_queued:
        # Race: another sweep read the same row; it bumped queued_at first, so it publishes.
        # The bump also makes the next sweep wait a full interval before publishing it again.
        if (
            Submission.objects.queued()
            .filter(queued_at=queued_at)
            .transition(submission_id, queued_at=now)
        ):
            to_publish.append(submission_id)
    for submission_id, attempts in expired:
        # Race: another sweep, or a late heartbeat of a slow (not dead) holder; matching on
        # attempts and the expired lease lets exactly one of them move the row.
        still_expired = Submission.objects.lease_expired(now=now).filter(attempts=attempts)
        if attempts >= settings.GRADER_MAX_ATTEMPTS:
            # Its last attempt died without a verdict: stop, and never charge the student.
            abandoned += still_expired.transition(
                submission_id,
                status=Submission.Status.INTERNAL_ERROR,
                message=MSG_INTERNAL_ERROR,
                finished_at=now,
                lease_expires_at=None,
            )
        elif still_expired.transition(
            submission_id, status=Submission.Status.QUEUED, queued_at=now, lease_expires_at=None
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
