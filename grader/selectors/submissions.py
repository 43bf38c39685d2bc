"""Reads of submissions, with what each viewer may see."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from django.db.models import Count, QuerySet

from grader.engine.checks.messages import as_math
from grader.engine.grading import visible_message
from grader.engine.misconceptions import misconception_describe
from grader.models import Exercise, ExerciseCheck, RegradePreview, Submission
from grader.selectors.misconceptions import misconceptions_described

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

MSG_CHECK_HIDDEN = "The details of this check are hidden."
MSG_CHECK_AFTER_DEADLINE = "The details of this check are shown after the deadline."


def submissions_of_user(*, user: AbstractBaseUser, exercise: Exercise | None = None) -> QuerySet:
    qs = Submission.objects.filter(user=user).select_related("exercise")
    return qs.filter(exercise=exercise) if exercise is not None else qs


def submission_queue_position(*, submission: Submission) -> int | None:
    """1 for the next queued submission to be graded, 2 for the one after...; None once it
    runs or is done. Fair share can let another user's later submission pass this one."""
    if submission.status != Submission.Status.QUEUED or submission.queued_at is None:
        return None
    ahead = Submission.objects.filter(
        status=Submission.Status.QUEUED, queued_at__lt=submission.queued_at
    ).count()
    return ahead + 1


def submission_get_for_user(*, user: AbstractBaseUser, submission_id: int) -> Submission | None:
    """A student sees only their own submissions; staff who may view submissions see all."""
    qs = Submission.objects.select_related("exercise", "user")
    if not (user.is_staff and user.has_perm("grader.view_submission")):
        qs = qs.filter(user=user)
    return qs.filter(pk=submission_id).first()


def submission_checks_visible(
    *, submission: Submission, viewer: AbstractBaseUser
) -> list[dict[str, Any]]:
    """Each check's pass/fail, with its message only where its visibility allows.

    The visibility is the exercise's current one, not the one stored with the verdict: hiding
    a check hides its message (and its expected values) on every earlier submission too.
    """
    shown = []
    deadline_passed = submission.exercise.deadline_passed
    staff_reader = viewer.is_staff and viewer.has_perm("grader.view_submission")
    current = _current_visibility(submission.exercise)
    for stored in submission.checks:
        check = {**stored, "visibility": _visibility_now(stored, current)}
        if staff_reader:  # instructors see every message, whatever the students see
            message: str | None = str(check.get("message", ""))
        else:
            message = visible_message(check=check, deadline_passed=deadline_passed)
        if message is None:
            hidden = check.get("visibility") == ExerciseCheck.Visibility.HIDDEN
            message = MSG_CHECK_HIDDEN if hidden else MSG_CHECK_AFTER_DEADLINE
        shown.append(
            {
                "name": check.get("name", ""),
                "label": as_math(check.get("label") or check.get("name", "")),
                "passed": bool(check.get("passed")),
                "weight": check.get("weight", 1.0),
                "message": as_math(message),
            }
        )
    return shown


_STRICTNESS = {
    ExerciseCheck.Visibility.SHOWN: 0,
    ExerciseCheck.Visibility.AFTER_DEADLINE: 1,
    ExerciseCheck.Visibility.HIDDEN: 2,
}


def _current_visibility(exercise: Exercise) -> dict[str, list[tuple[str, str]]]:
    """name -> [(label, visibility)] of the exercise's checks as they are now."""
    current: dict[str, list[tuple[str, str]]] = {}
    for name, label, visibility in exercise.checks.values_list("name", "label", "visibility"):
        current.setdefault(name, []).append((label, visibility))
    return current


def _visibility_now(stored: dict[str, Any], current: dict[str, list[tuple[str, str]]]) -> str:
    same_name = current.get(stored.get("name", ""), [])
    if not same_name:  # the check was removed since: what was stored with the verdict
        return str(stored.get("visibility", ExerciseCheck.Visibility.SHOWN))
    same_label = [v for label, v in same_name if label == stored.get("label")]
    # One check by that name (or label): its visibility. Several: the strictest of them.
    candidates = same_label or [v for _, v in same_name]
    return max(candidates, key=lambda v: _STRICTNESS.get(v, 2))


def submission_diagnosis(*, submission: Submission) -> list[dict[str, Any]]:
    """Misconception codes with their explanation, links and the rebuttal's text itself."""
    return misconceptions_described(codes=list(submission.diagnosis or []))


def submission_diff(*, older: Submission, newer: Submission) -> list[tuple[str, str]]:
    """A unified diff as (kind, line) pairs; kind is add, del, hunk, file or ''."""
    lines = difflib.unified_diff(
        older.code.splitlines(),
        newer.code.splitlines(),
        fromfile=f"#{older.pk}",
        tofile=f"#{newer.pk}",
        lineterm="",
    )
    return [(_diff_kind(line), line) for line in lines]


def _diff_kind(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    return {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "")


def misconception_counts() -> list[dict[str, Any]]:
    """How often each misconception appears per exercise, on final submissions."""
    counts: dict[tuple[str, str], int] = {}
    rows = Submission.objects.filter(status__in=Submission.FINAL_STATUSES).values_list(
        "exercise__slug", "diagnosis"
    )
    for slug, codes in rows.iterator():
        for code in codes or []:
            counts[(slug, code)] = counts.get((slug, code), 0) + 1
    totals = dict(
        Submission.objects.filter(status__in=Submission.FINAL_STATUSES)
        .values_list("exercise__slug")
        .annotate(n=Count("id"))
    )
    rows = []
    for (slug, code), n in sorted(counts.items(), key=lambda kv: (kv[0][0], -kv[1])):
        described = misconception_describe(code)
        rows.append(
            {
                "exercise": slug,
                "code": code,
                "title": described["title"],
                "explanation_url": described["explanation_url"],
                "count": n,
                "share": n / max(totals.get(slug, 1), 1),
            }
        )
    return rows


def regrade_preview_latest(*, exercise: Exercise) -> RegradePreview | None:
    return RegradePreview.objects.filter(exercise=exercise).first()
