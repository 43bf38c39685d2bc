"""Writes of regrades: preview what would change (a worker grades, stores nothing), apply it
(every final submission goes through the pipeline again, same seeds), and tell each student
whose score changed.

preview: regrade_preview_request -> worker: regrade_preview_run (RegradePreview row)
apply:   submissions_regrade (a Regrade row; each submission keeps its old verdict in
         regrade_old_status/score and is queued again) -> the normal pipeline grades it ->
         submission_finish stores the verdict and calls regrade_notice_record ->
         a RegradeNotice when the score or the status changed (announced unless the score
         moved less than the regrade's threshold) -> the student's pages show one notice per
         exercise per regrade until they dismiss it (regrade_notice_dismiss).

This module imports nothing of grader.services.queue (which calls into it).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from grader.models import (
    REGRADE_NOTICE_THRESHOLD,
    Exercise,
    Regrade,
    RegradeNotice,
    RegradePreview,
    Submission,
)
from grader.publish import GRADE_SUBMISSION, REGRADE_PREVIEW, task_publish
from grader.services.jobs import job_request

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from grader.engine.executors import Executor

log = logging.getLogger(__name__)

# The notice's "why", as the student reads it; {date} is when the checks last changed.
MSG_REGRADE_REASON = "the exercise's checks changed on {date}"
MSG_REGRADE_IN_PROGRESS = (
    "A regrade of this exercise is still running ({done} of {total} regraded). "
    "Wait for it to finish, then apply another."
)
MSG_PREVIEW_USED = "That preview was already applied, or is out of date; preview again."

# Enough for a course's worth of final submissions in one synchronous preview (a few ms each).
REGRADE_PREVIEW_MAX = 2000


class RegradeRefused(Exception):
    """A regrade that can't be applied now, with a message for the instructor."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class RegradeChange:
    submission_id: int
    username: str
    old_status: str
    new_status: str
    old_score: float | None
    new_score: float | None


@dataclass(frozen=True)
class RegradeOutcome:
    total: int
    graded: int
    changes: list[RegradeChange]


def submissions_regrade_preview(*, exercise: Exercise, executor: Executor) -> RegradeOutcome:
    """Grade the exercise's final submissions again with its current checks; store nothing.

    Uses each submission's stored seed, so a change in the preview comes from the checks, not
    from new random inputs.
    """
    from grader.engine.grading import grade
    from grader.selectors.exercises import exercise_spec_get

    spec = exercise_spec_get(exercise=exercise)
    finals = Submission.objects.filter(
        exercise=exercise, status__in=Submission.FINAL_STATUSES
    ).select_related("user")
    changes = []
    graded = 0
    for submission in finals.order_by("pk")[:REGRADE_PREVIEW_MAX]:
        verdict = grade(spec=spec, code=submission.code, seed=submission.seed, executor=executor)
        graded += 1
        new = verdict.to_dict()
        if new["status"] != submission.status or not _same_score(new["score"], submission.score):
            changes.append(
                RegradeChange(
                    submission_id=submission.pk,
                    username=submission.user.get_username(),
                    old_status=submission.status,
                    new_status=new["status"],
                    old_score=submission.score,
                    new_score=new["score"],
                )
            )
    return RegradeOutcome(total=finals.count(), graded=graded, changes=changes)


def _same_score(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) < 1e-9


def regrade_preview_request(*, exercise: Exercise, user: AbstractBaseUser) -> RegradePreview:
    """Ask a worker for a regrade preview: the web process never runs a sandbox itself."""
    return job_request(model=RegradePreview, task=REGRADE_PREVIEW, exercise=exercise, user=user)


def regrade_preview_run(*, preview_id: int, executor: Executor) -> RegradePreview | None:
    """Compute a requested preview (in a worker). Returns None if another worker has it."""
    preview = RegradePreview.claim(preview_id)
    if preview is None:
        return None
    try:
        result = submissions_regrade_preview(exercise=preview.exercise, executor=executor)
    except Exception:
        log.exception("regrade preview %s failed", preview_id)
        preview.finish(failed=True)
    else:
        preview.total, preview.graded = result.total, result.graded
        preview.changes = [asdict(change) for change in result.changes]
        preview.finish(failed=False, fields=("total", "graded", "changes"))
    return preview


def submissions_regrade(
    *,
    exercise: Exercise,
    user: AbstractBaseUser | None = None,
    preview: RegradePreview | None = None,
    notice_threshold: float = REGRADE_NOTICE_THRESHOLD,
) -> Regrade:
    """Send every final submission of the exercise through the pipeline again (same seeds).

    Each row keeps the verdict it had (regrade_old_status/score) and points at the Regrade,
    so the grade that finishes it knows to compare and to tell the student. A score that moves
    less than ``notice_threshold`` (status unchanged) is recorded but not announced.
    """
    now = timezone.now()
    with transaction.atomic():
        # Locks the exercise's row (on SQLite, IMMEDIATE transactions serialise writers):
        # two instructors applying at once must not both see "no regrade running".
        Exercise.objects.select_for_update().filter(pk=exercise.pk).first()
        running = Regrade.objects.filter(exercise=exercise).first()
        if running is not None:
            done, total = _regrade_counts(running)
            if done < total:
                raise RegradeRefused(MSG_REGRADE_IN_PROGRESS.format(done=done, total=total))
        if preview is not None and (
            preview.exercise_id != exercise.pk
            or Regrade.objects.filter(preview=preview).exists()
            or (running is not None and preview.created_at <= running.created_at)
        ):
            raise RegradeRefused(MSG_PREVIEW_USED)
        regrade = Regrade.objects.create(
            exercise=exercise,
            requested_by=user,
            preview=preview,
            checks_changed_at=exercise.updated_at,
            created_at=now,
            notice_threshold=notice_threshold,
        )
        # One UPDATE: the right-hand F() values are the row's values before it (SQL semantics),
        # so the old verdict is recorded and the row queued together.
        total = Submission.objects.filter(
            exercise=exercise, status__in=Submission.FINAL_STATUSES
        ).update(
            regrade=regrade,
            regrade_old_status=F("status"),
            regrade_old_score=F("score"),
            status=Submission.Status.QUEUED,
            attempts=0,
            queued_at=now,
            started_at=None,
            finished_at=None,
            lease_expires_at=None,
            worker="",
        )
        regrade.total = total
        regrade.save(update_fields=["total"])
        regrade_id = regrade.pk
        transaction.on_commit(lambda: _regrade_publish(regrade_id=regrade_id))
    return regrade


def _regrade_publish(*, regrade_id: int) -> None:
    ids = Submission.objects.filter(
        regrade_id=regrade_id, status=Submission.Status.QUEUED
    ).values_list("pk", flat=True)
    for submission_id in ids.iterator():
        if not task_publish(name=GRADE_SUBMISSION, args=(submission_id,)):
            # The broker is away: the rest stay queued and the sweeper publishes them later,
            # rather than each waiting out its own publish timeout now.
            break


def _regrade_counts(regrade: Regrade) -> tuple[int, int]:
    done = Submission.objects.filter(regrade=regrade, status__in=Submission.FINAL_STATUSES).count()
    return done, regrade.total


def regrade_notice_record(*, submission: Submission) -> None:
    """The regraded verdict of ``submission`` is stored (its fields hold it): tell its student
    if it changed.

    Called by submission_finish for rows a regrade queued (``regrade_id`` set) only. An
    internal error is ours, not a verdict on the student's code: no notice for it.
    """
    new_status, new_score = submission.status, submission.score
    old_status, old_score = submission.regrade_old_status, submission.regrade_old_score
    if new_status == Submission.Status.INTERNAL_ERROR:
        return
    if new_status == old_status and _same_score(new_score, old_score):
        return
    changed_at, threshold = (
        Regrade.objects.filter(pk=submission.regrade_id)
        .values_list("checks_changed_at", "notice_threshold")
        .first()
    ) or (None, REGRADE_NOTICE_THRESHOLD)
    date = timezone.localtime(changed_at or timezone.now()).strftime("%Y-%m-%d")
    small_move = (
        new_status == old_status
        and new_score is not None
        and old_score is not None
        and abs(new_score - old_score) < threshold
    )
    RegradeNotice.objects.create(
        regrade_id=submission.regrade_id if changed_at is not None else None,
        announced=not small_move,
        submission_id=submission.pk,
        user_id=submission.user_id,
        old_status=old_status,
        old_score=old_score,
        new_status=new_status,
        new_score=new_score,
        reason=MSG_REGRADE_REASON.format(date=date),
    )


def regrade_notice_dismiss(*, user: AbstractBaseUser, notice_id: int) -> bool:
    """Mark the student's own notice seen, with the others of its regrade and exercise (one
    notice on the page stands for them all); False if it is not theirs (or already seen)."""
    notice = (
        RegradeNotice.objects.filter(pk=notice_id, user=user, seen_at__isnull=True)
        .values("regrade_id", "submission__exercise_id")
        .first()
    )
    if notice is None:
        return False
    group = RegradeNotice.objects.filter(pk=notice_id)
    if notice["regrade_id"] is not None:
        group = RegradeNotice.objects.filter(
            user=user,
            regrade_id=notice["regrade_id"],
            submission__exercise_id=notice["submission__exercise_id"],
        )
    return bool(group.filter(seen_at__isnull=True).update(seen_at=timezone.now()))
