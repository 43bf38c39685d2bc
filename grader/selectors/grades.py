"""Reads of grades: each student's standing per exercise, and the same as CSV for a
spreadsheet (the staff page's download and GET /api/grades.csv)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Max, OuterRef, Q, Subquery

from grader.models import Submission

GRADES_COLUMNS = (
    "username",
    "exercise",
    "best_score",
    "latest_score",
    "submissions",
    "last_submitted_at",
)
# A spreadsheet runs a cell starting with one of these as a formula (CSV injection): such a
# text cell is written with a leading apostrophe, which spreadsheets show as plain text.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
# Graded verdicts: an internal error is ours and never counted against the student.
GRADED = (Submission.Status.PASSED, Submission.Status.FAILED, Submission.Status.ERROR)


@dataclass(frozen=True)
class GradeRow:
    username: str
    exercise: str
    best_score: float | None  # over graded submissions; None while none is graded
    latest_score: float | None  # of the latest graded submission
    submissions: int  # every submission, graded or not
    last_submitted_at: datetime


def grades_rows() -> list[GradeRow]:
    """One row per student and exercise they submitted to, by username then exercise. Staff
    (instructors trying their own exercises) are not students: no row of theirs."""
    graded = Q(status__in=GRADED)
    latest_graded = Submission.objects.filter(
        user_id=OuterRef("user_id"), exercise_id=OuterRef("exercise_id"), status__in=GRADED
    ).order_by("-received_at", "-id")
    rows = (
        Submission.objects.filter(user__is_staff=False)
        .values("user_id", "exercise_id")
        .annotate(
            username=Max("user__username"),
            exercise_slug=Max("exercise__slug"),
            best=Max("score", filter=graded),
            n=Count("id"),
            last=Max("received_at"),
            latest=Subquery(latest_graded.values("score")[:1]),
        )
        .order_by("username", "exercise_slug")
    )
    return [
        GradeRow(
            username=r["username"],
            exercise=r["exercise_slug"],
            best_score=r["best"],
            latest_score=r["latest"],
            submissions=r["n"],
            last_submitted_at=r["last"],
        )
        for r in rows
    ]


def csv_cell(value: object) -> str:
    """A value as a CSV cell a spreadsheet will not run as a formula."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, datetime):
        return value.isoformat()
    text = str(value)
    return f"'{text}" if text.startswith(FORMULA_PREFIXES) else text


def grades_csv_lines(rows: Iterable[GradeRow]) -> Iterator[str]:
    """The CSV, header first, one string per line (for a streaming response)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(GRADES_COLUMNS)
    for row in rows:
        writer.writerow(
            [
                csv_cell(row.username),
                csv_cell(row.exercise),
                csv_cell(row.best_score),
                csv_cell(row.latest_score),
                str(row.submissions),
                csv_cell(row.last_submitted_at),
            ]
        )
        if buffer.tell() > 64 * 1024:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def grades_csv() -> str:
    return "".join(grades_csv_lines(grades_rows()))
