"""Reads of regrades: the preview an instructor may still apply, how far an applied regrade
is, and the notices a student has not seen yet."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import Count, Q, QuerySet

from grader.models import Exercise, Regrade, RegradeNotice, RegradePreview, Submission
from grader.selectors.exercises import exercise_published_q

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


@dataclass(frozen=True)
class PreviewState:
    preview: RegradePreview
    # Computed against checks that have changed since: its counts are no longer true.
    outdated: bool

    @property
    def can_apply(self) -> bool:
        return self.preview.status == RegradePreview.Status.DONE and not self.outdated


def regrade_preview_current(*, exercise: Exercise) -> PreviewState | None:
    """The latest preview, unless a regrade was applied after it was asked for (used up)."""
    preview = RegradePreview.objects.filter(exercise=exercise).first()
    if preview is None:
        return None
    # Applied, or another regrade applied since it was asked for: either way it is used up.
    applied = Regrade.objects.filter(exercise=exercise).filter(
        Q(preview=preview) | Q(created_at__gte=preview.created_at)
    )
    if applied.exists():
        return None
    return PreviewState(preview=preview, outdated=exercise.updated_at > preview.created_at)


def regrade_preview_get(*, exercise: Exercise, preview_id: int) -> PreviewState | None:
    """That preview of the exercise if it is still the current one (a confirmation's)."""
    state = regrade_preview_current(exercise=exercise)
    return state if state is not None and state.preview.pk == preview_id else None


@dataclass(frozen=True)
class RegradeProgress:
    regrade: Regrade
    done: int
    internal_errors: int
    notices: int

    @property
    def total(self) -> int:
        return self.regrade.total

    @property
    def is_done(self) -> bool:
        return self.done >= self.total


def regrade_progress_latest(*, exercise: Exercise) -> RegradeProgress | None:
    """The exercise's latest applied regrade: how many of its submissions have a verdict."""
    regrade = Regrade.objects.filter(exercise=exercise).select_related("requested_by").first()
    if regrade is None:
        return None
    counts = Submission.objects.filter(regrade=regrade).aggregate(
        done=Count("id", filter=Q(status__in=Submission.FINAL_STATUSES)),
        internal=Count("id", filter=Q(status=Submission.Status.INTERNAL_ERROR)),
    )
    notices = RegradeNotice.objects.filter(
        submission__regrade=regrade, created_at__gte=regrade.created_at
    ).count()
    return RegradeProgress(
        regrade=regrade,
        done=counts["done"],
        internal_errors=counts["internal"],
        notices=notices,
    )


def regrade_final_submission_count(*, exercise: Exercise) -> int:
    """How many submissions applying a regrade now would send through the pipeline again."""
    finals = Submission.objects.filter(exercise=exercise, status__in=Submission.FINAL_STATUSES)
    return finals.count()


def regrade_notices_unseen(
    *, user: AbstractBaseUser, exercise: Exercise | None = None
) -> QuerySet[RegradeNotice]:
    """The student's notices not dismissed yet, newest first (one exercise's, if given), of
    published exercises only."""
    if not user.is_authenticated:
        return RegradeNotice.objects.none()
    qs = RegradeNotice.objects.filter(
        exercise_published_q(via="submission__exercise__"), user=user, seen_at__isnull=True
    ).select_related("submission__exercise")
    return qs.filter(submission__exercise=exercise) if exercise is not None else qs
