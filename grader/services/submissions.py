"""Writes of the submission pipeline.

browser/API -> submission_create (row, then enqueue on commit, id only) -> worker task ->
submission_claim (conditional update) -> sandbox computes outputs -> trusted checks judge them
-> submission_finish (only the claim's holder writes) -> the page polls the row.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from grader.engine.executors.extra import ExtraCallsExecutor
from grader.engine.limits import CODE_MAX_BYTES
from grader.models import Exercise, RegradePreview, Submission
from grader.publish import GRADE_SUBMISSION, REGRADE_PREVIEW, task_publish

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from grader.engine.executors import Executor

log = logging.getLogger(__name__)

MSG_CODE_EMPTY = "Your code is empty. Paste or write a function, then submit."
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
MSG_EXERCISE_UNAVAILABLE = "This exercise is not open for submissions."
MSG_INTERNAL_ERROR = (
    "The grader failed on our side, not yours. This submission is not counted against you; "
    "please submit again later."
)
MSG_GRADING_AGAIN = "The grader hit a problem on our side; your submission will be graded again."


class SubmissionRejected(Exception):
    """A submission that can't be accepted, with a message for the user and an HTTP status."""

    def __init__(self, message: str, *, status_code: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code


def submission_create(
    *, user: AbstractBaseUser, exercise: Exercise, code: str, now: Any = None
) -> Submission:
    if not exercise.is_published:
        raise SubmissionRejected(MSG_EXERCISE_UNAVAILABLE, status_code=404)
    if not code.strip():
        raise SubmissionRejected(MSG_CODE_EMPTY)
    if len(code.encode()) > CODE_MAX_BYTES:
        raise SubmissionRejected(MSG_CODE_TOO_LARGE, status_code=413)
    now = now or timezone.now()
    with transaction.atomic():
        # Race: two submits of one user at once would both count 4 waiting rows and both pass
        # a cap of 5. Locking the user's row makes them count one after the other (on SQLite,
        # IMMEDIATE transactions already serialise writers).
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        waiting = Submission.objects.filter(
            status__in=(Submission.Status.QUEUED, Submission.Status.RUNNING)
        )
        cap = settings.GRADER_MAX_QUEUED_PER_USER
        if waiting.filter(user=user).count() >= cap:
            raise SubmissionRejected(MSG_TOO_MANY_QUEUED.format(n=cap), status_code=429)
        if waiting.count() >= settings.GRADER_MAX_QUEUED_TOTAL:
            raise SubmissionRejected(MSG_QUEUE_FULL, status_code=429)
        submission = Submission.objects.create(
            user=user,
            exercise=exercise,
            code=code,
            status=Submission.Status.QUEUED,
            # The seed of the hidden inputs: stored, so any rerun replays the same verdict.
            seed=secrets.randbits(31),
            received_at=now,
            queued_at=now,
        )
        # Publish only once the row is committed: a worker must never receive an id it can't
        # read. If the publish fails (Redis down), the sweeper finds the row still queued.
        submission_id = submission.pk
        transaction.on_commit(lambda: submission_enqueue(submission_id=submission_id))
    return submission


def submission_enqueue(*, submission_id: int, countdown: float | None = None) -> bool:
    return task_publish(name=GRADE_SUBMISSION, args=(submission_id,), countdown=countdown)


def submission_claim(*, submission_id: int, worker: str) -> Submission | None:
    """Take the row for grading, or return None if someone else holds it or it is done.

    A single conditional UPDATE, not read-then-write: an acks_late redelivery, the sweeper's
    re-enqueue and the original message can reach two workers at once, and only one UPDATE can
    match. ``worker`` may re-claim its own row (a task retried after a database error).
    """
    now = timezone.now()
    claimable = Q(status=Submission.Status.QUEUED) | Q(
        Q(lease_expires_at__lte=now) | Q(worker=worker), status=Submission.Status.RUNNING
    )
    updated = Submission.objects.filter(claimable, pk=submission_id).update(
        status=Submission.Status.RUNNING,
        started_at=now,
        lease_expires_at=now + timedelta(seconds=settings.GRADER_LEASE_SECONDS),
        attempts=F("attempts") + 1,
        worker=worker,
    )
    if not updated:
        return None
    return Submission.objects.select_related("exercise").get(pk=submission_id)


def submission_finish(*, submission: Submission, verdict: dict[str, Any]) -> bool:
    """Store the verdict, only if this claim still holds the row.

    ``attempts`` is the fencing token: if our lease expired and another worker re-claimed the
    row, it bumped ``attempts`` and this late write matches nothing.
    """
    updated = Submission.objects.filter(
        pk=submission.pk,
        status=Submission.Status.RUNNING,
        attempts=submission.attempts,
        worker=submission.worker,
    ).update(
        status=verdict["status"],
        score=verdict.get("score"),
        checks=verdict.get("checks", []),
        diagnosis=verdict.get("diagnosis", []),
        message=verdict.get("message", ""),
        stdout=verdict.get("stdout", ""),
        plots=verdict.get("plots", {}),
        finished_at=timezone.now(),
        lease_expires_at=None,
    )
    if not updated:
        log.warning("submission %s: lost the claim before writing the verdict", submission.pk)
    return bool(updated)


def submission_release(*, submission: Submission) -> None:
    """Our fault (sandbox broke, worker unhealthy): requeue, or give up after the attempt cap."""
    if submission.attempts >= settings.GRADER_MAX_ATTEMPTS:
        submission_finish(
            submission=submission,
            verdict={"status": Submission.Status.INTERNAL_ERROR, "message": MSG_INTERNAL_ERROR},
        )
        return
    updated = Submission.objects.filter(
        pk=submission.pk, status=Submission.Status.RUNNING, attempts=submission.attempts
    ).update(
        status=Submission.Status.QUEUED,
        queued_at=timezone.now(),
        lease_expires_at=None,
        message=MSG_GRADING_AGAIN,
    )
    if updated:
        submission_enqueue(submission_id=submission.pk, countdown=2.0 * submission.attempts)


def submission_release_if_held(*, submission_id: int, worker: str) -> None:
    submission = Submission.objects.filter(
        pk=submission_id, status=Submission.Status.RUNNING, worker=worker
    ).first()
    if submission is not None:
        submission_release(submission=submission)


def submission_grade(*, submission_id: int, worker: str, executor: Executor | None) -> str | None:
    """Claim, grade through the sandbox, store. Returns the final status, or None if not ours."""
    from grader.engine.grading import grade
    from grader.engine.plots import plot_calls, plots_from_results
    from grader.selectors.exercises import exercise_spec_get

    submission = submission_claim(submission_id=submission_id, worker=worker)
    if submission is None:
        return None
    if submission.attempts > settings.GRADER_MAX_ATTEMPTS:
        # Delivered again and again (it kills its worker, or the sandbox keeps failing).
        submission_finish(
            submission=submission,
            verdict={"status": Submission.Status.INTERNAL_ERROR, "message": MSG_INTERNAL_ERROR},
        )
        return Submission.Status.INTERNAL_ERROR
    if executor is None:  # the sandbox refused to start here: fail closed, try elsewhere
        submission_release(submission=submission)
        return None
    exercise = submission.exercise
    # The pictures' hidden-free inputs ride along in the grade's one sandbox run.
    with_plots = ExtraCallsExecutor(executor, plot_calls(exercise.kind))
    verdict = grade(
        spec=exercise_spec_get(exercise=exercise),
        code=submission.code,
        seed=submission.seed,
        executor=with_plots,
    )
    result = verdict.to_dict()
    if result["status"] == Submission.Status.INTERNAL_ERROR:
        submission_release(submission=submission)
        return None
    if result["status"] != Submission.Status.ERROR and with_plots.extra_results:
        result["plots"] = plots_from_results(
            exercise.kind, with_plots.extra_results, diagnosis=result["diagnosis"]
        )
    submission_finish(submission=submission, verdict=result)
    return result["status"]


@dataclass(frozen=True)
class SweepReport:
    requeued: int
    abandoned: int


def submissions_sweep(*, now: Any = None) -> SweepReport:
    """Re-enqueue what a lost message or a dead worker left behind.

    Covers: a crash between commit and publish, Redis down at submit time, Redis restarted
    with its queue lost, and a worker killed mid-grade whose lease ran out.
    """
    now = now or timezone.now()
    stale_queued = Submission.objects.filter(
        status=Submission.Status.QUEUED,
        queued_at__lte=now - timedelta(seconds=settings.GRADER_REQUEUE_AFTER_SECONDS),
    )
    expired = Submission.objects.filter(status=Submission.Status.RUNNING, lease_expires_at__lte=now)
    abandoned = 0
    for submission in expired.filter(attempts__gte=settings.GRADER_MAX_ATTEMPTS):
        # Its last attempt died without a verdict: stop, and never charge the student.
        abandoned += Submission.objects.filter(
            pk=submission.pk, status=Submission.Status.RUNNING, attempts=submission.attempts
        ).update(
            status=Submission.Status.INTERNAL_ERROR,
            message=MSG_INTERNAL_ERROR,
            finished_at=now,
            lease_expires_at=None,
        )
    requeue_ids = list(stale_queued.values_list("pk", flat=True)) + list(
        expired.filter(attempts__lt=settings.GRADER_MAX_ATTEMPTS).values_list("pk", flat=True)
    )
    # Bump queued_at so the next sweep waits a full interval before publishing these again.
    Submission.objects.filter(pk__in=requeue_ids, status=Submission.Status.QUEUED).update(
        queued_at=now
    )
    for submission_id in requeue_ids:
        submission_enqueue(submission_id=submission_id)
    if requeue_ids or abandoned:
        log.info("sweep: requeued %s, abandoned %s", len(requeue_ids), abandoned)
    return SweepReport(requeued=len(requeue_ids), abandoned=abandoned)


# Enough for a course's worth of final submissions in one synchronous preview (a few ms each).
REGRADE_PREVIEW_MAX = 2000


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
    with transaction.atomic():
        preview = RegradePreview.objects.create(exercise=exercise, requested_by=user)
        preview_id = preview.pk
        transaction.on_commit(lambda: task_publish(name=REGRADE_PREVIEW, args=(preview_id,)))
    return preview


def regrade_preview_run(*, preview_id: int, executor: Executor) -> RegradePreview | None:
    """Compute a requested preview (in a worker). Returns None if another worker has it."""
    # Conditional update: a redelivered message must not compute the same preview twice.
    claimed = RegradePreview.objects.filter(
        pk=preview_id, status=RegradePreview.Status.QUEUED
    ).update(status=RegradePreview.Status.RUNNING)
    if not claimed:
        return None
    preview = RegradePreview.objects.select_related("exercise").get(pk=preview_id)
    try:
        result = submissions_regrade_preview(exercise=preview.exercise, executor=executor)
    except Exception:
        log.exception("regrade preview %s failed", preview_id)
        preview.status = RegradePreview.Status.FAILED
    else:
        preview.status = RegradePreview.Status.DONE
        preview.total, preview.graded = result.total, result.graded
        preview.changes = [asdict(change) for change in result.changes]
    preview.finished_at = timezone.now()
    preview.save(update_fields=["status", "total", "graded", "changes", "finished_at"])
    return preview


def submissions_regrade(*, exercise: Exercise) -> int:
    """Send every final submission of the exercise through the pipeline again (same seeds)."""
    now = timezone.now()
    ids = list(
        Submission.objects.filter(
            exercise=exercise, status__in=Submission.FINAL_STATUSES
        ).values_list("pk", flat=True)
    )
    with transaction.atomic():
        Submission.objects.filter(pk__in=ids).update(
            status=Submission.Status.QUEUED,
            attempts=0,
            queued_at=now,
            started_at=None,
            finished_at=None,
            worker="",
        )
        transaction.on_commit(lambda: [submission_enqueue(submission_id=i) for i in ids])
    return len(ids)
