"""Reads of regrades: the preview an instructor may still apply, how far an applied regrade
is, and the notices a student has not seen yet (one per exercise per regrade)."""

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
    quiet: int = 0  # of the notices, the small moves listed in the details, not announced

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
    ).aggregate(all=Count("id"), quiet=Count("id", filter=Q(announced=False)))
    return RegradeProgress(
        regrade=regrade,
        done=counts["done"],
        internal_errors=counts["internal"],
        notices=notices["all"],
        quiet=notices["quiet"],
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


@dataclass(frozen=True)
class RegradeAnnouncement:
    """What a student is told of one regrade of one exercise: the score that counts (their
    best) before and after, and how many attempts changed; the rows are in the details."""

    notice: RegradeNotice  # the newest of the group: Dismiss acts on the whole group
    exercise: Exercise
    best_before: float | None
    best_after: float | None
    changed: int
    quiet: int  # of which moved less than the threshold (listed, not announced)

    @property
    def best_moved(self) -> bool:
        if self.best_before is None or self.best_after is None:
            return self.best_before is not self.best_after
        return abs(self.best_after - self.best_before) > 1e-9


_GRADED = (Submission.Status.PASSED, Submission.Status.FAILED)


def _best_scores(
    *, user: AbstractBaseUser, exercise: Exercise, regrade_id: int
) -> tuple[float | None, float | None]:
    """The student's best score on the exercise before that regrade and now."""
    before: list[float] = []
    after: list[float] = []
    rows = Submission.objects.filter(user=user, exercise=exercise).values_list(
        "status", "score", "regrade_id", "regrade_old_status", "regrade_old_score"
    )
    for status, score, regrade, old_status, old_score in rows:
        now_graded = status in _GRADED and score is not None
        if regrade == regrade_id:
            if old_status in _GRADED and old_score is not None:
                before.append(old_score)
                if not now_graded:  # not regraded yet: its old verdict still stands
                    after.append(old_score)
        elif now_graded:
            before.append(score)
        if now_graded:
            after.append(score)
    return (max(before) if before else None, max(after) if after else None)


def regrade_announcements_unseen(
    *, user: AbstractBaseUser, exercise: Exercise | None = None
) -> list[RegradeAnnouncement]:
    """One announcement per exercise per regrade with an unseen notice that moved a score by
    at least the regrade's threshold or changed a status, newest first."""
    groups: dict[tuple[object, ...], list[RegradeNotice]] = {}
    for notice in regrade_notices_unseen(user=user, exercise=exercise):
        key = (
            ("regrade", notice.regrade_id, notice.submission.exercise_id)
            if notice.regrade_id is not None
            else ("notice", notice.pk)
        )
        groups.setdefault(key, []).append(notice)
    announcements = []
    for notices in groups.values():
        if not any(n.announced for n in notices):
            continue
        newest = notices[0]
        ex = newest.submission.exercise
        if newest.regrade_id is not None:
            before, after = _best_scores(user=user, exercise=ex, regrade_id=newest.regrade_id)
        else:
            before, after = newest.old_score, newest.new_score
        announcements.append(
            RegradeAnnouncement(
                notice=newest,
                exercise=ex,
                best_before=before,
                best_after=after,
                changed=len(notices),
                quiet=sum(not n.announced for n in notices),
            )
        )
    return announcements


@dataclass(frozen=True)
class RegradeDetails:
    regrade: Regrade
    notices: list[RegradeNotice]


def regrade_details_for_user(*, user: AbstractBaseUser, regrade_id: int) -> RegradeDetails | None:
    """Every attempt of the student's that a regrade changed, announced or not; None if none
    (another student's regrade details do not exist for this one)."""
    notices = list(
        RegradeNotice.objects.filter(
            exercise_published_q(via="submission__exercise__"), user=user, regrade_id=regrade_id
        )
        .select_related("submission__exercise", "regrade")
        .order_by("submission_id")
    )
    if not notices or notices[0].regrade is None:
        return None
    return RegradeDetails(regrade=notices[0].regrade, notices=notices)
