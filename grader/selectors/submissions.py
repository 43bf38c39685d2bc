"""Reads of submissions, with what each viewer may see."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from django.db.models import Count, QuerySet

from grader.engine.grading import visible_message
from grader.engine.misconceptions import misconception_describe
from grader.models import Exercise, ExerciseCheck, RegradePreview, Submission

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

MSG_CHECK_HIDDEN = "The details of this check are hidden."
MSG_CHECK_AFTER_DEADLINE = "The details of this check are shown after the deadline."


def submissions_of_user(*, user: AbstractBaseUser, exercise: Exercise | None = None) -> QuerySet:
    qs = Submission.objects.filter(user=user).select_related("exercise")
    return qs.filter(exercise=exercise) if exercise is not None else qs


def submission_get_for_user(*, user: AbstractBaseUser, submission_id: int) -> Submission | None:
    """A student sees only their own submissions; staff see all."""
    qs = Submission.objects.select_related("exercise", "user")
    if not user.is_staff:
        qs = qs.filter(user=user)
    return qs.filter(pk=submission_id).first()


def submission_checks_visible(
    *, submission: Submission, viewer: AbstractBaseUser
) -> list[dict[str, Any]]:
    """Each check's pass/fail, with its message only where its visibility allows."""
    shown = []
    deadline_passed = submission.exercise.deadline_passed
    for check in submission.checks:
        if viewer.is_staff:  # instructors see every message, whatever the students see
            message: str | None = str(check.get("message", ""))
        else:
            message = visible_message(check=check, deadline_passed=deadline_passed)
        if message is None:
            hidden = check.get("visibility") == ExerciseCheck.Visibility.HIDDEN
            message = MSG_CHECK_HIDDEN if hidden else MSG_CHECK_AFTER_DEADLINE
        shown.append(
            {
                "name": check.get("name", ""),
                "label": check.get("label") or check.get("name", ""),
                "passed": bool(check.get("passed")),
                "weight": check.get("weight", 1.0),
                "message": message,
            }
        )
    return shown


def submission_diagnosis(*, submission: Submission) -> list[dict[str, Any]]:
    """Misconception codes with their explanation and the rebuttal they link to."""
    return [misconception_describe(code) for code in submission.diagnosis]


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
