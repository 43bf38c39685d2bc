"""Reads for the misconception explanations: each code described, with its wrong answer's rebuttal.

The rebuttal lives on the question page behind the interview gate (a candidate sees it only after
answering). A student sent here by a verdict is not answering that question, so the verdict and
the misconception page show the rebuttal's text itself; the question page keeps its gate.
"""

from __future__ import annotations

import os
from collections import defaultdict
from datetime import date, timedelta
from typing import Any
from urllib.parse import urlencode

from django.db.models import Count, Q
from django.urls import reverse
from django.utils import timezone

from common.rendering import render_inline, render_markdown, strip_markers
from grader.engine.misconception_figures import misconception_links
from grader.engine.misconceptions import (
    MISCONCEPTIONS,
    QUESTION_PATH,
    QUESTION_SLUG,
    misconception_describe,
    misconceptions_catalogue,
)
from grader.engine.sandbox.messages import MSG_CPU_LIMIT, MSG_WALL_LIMIT
from grader.models import Exercise, Submission
from questions.models import WrongAnswer


def _rebuttals() -> dict[str, WrongAnswer]:
    """Slug -> the main question's wrong answer (only the slugs the catalogue links to)."""
    slugs = {m.wrong_answer_slug for m in MISCONCEPTIONS.values() if m.wrong_answer_slug}
    rows = WrongAnswer.objects.filter(question__slug=QUESTION_SLUG, slug__in=slugs)
    return {wa.slug: wa for wa in rows}


def _with_rebuttal(entry: dict[str, Any], rebuttals: dict[str, WrongAnswer]) -> dict[str, Any]:
    m = MISCONCEPTIONS.get(entry["code"])
    wa = rebuttals.get(m.wrong_answer_slug) if m and m.wrong_answer_slug else None
    return {
        **entry,
        # Markdown with $math$ (the API's plain form) and the same as safe HTML (the pages').
        "title_html": render_inline(entry["title"]),
        "explanation_html": render_markdown(entry["explanation"]) if entry["explanation"] else "",
        "links": misconception_links(entry["code"]),
        # The question page itself: its #wrong-… anchors exist only once a candidate answered.
        "question_url": QUESTION_PATH.format(question=QUESTION_SLUG) if wa else None,
        "rebuttal": wa.rebuttal if wa else None,
        "rebuttal_statement": wa.statement if wa else None,
        "rebuttal_html": render_markdown(strip_markers(wa.rebuttal)) if wa else "",
        "rebuttal_statement_html": render_markdown(wa.statement) if wa else "",
    }


def misconceptions_described(*, codes: list[str]) -> list[dict[str, Any]]:
    """Each code described (engine.misconceptions) with its rebuttal's text, in the given order."""
    rebuttals = _rebuttals() if codes else {}
    return [_with_rebuttal(misconception_describe(code), rebuttals) for code in codes]


def misconception_catalogue_with_rebuttals() -> list[dict[str, Any]]:
    """Every code with its explanation, figure and rebuttal: the misconception page."""
    rebuttals = _rebuttals()
    return [_with_rebuttal(entry, rebuttals) for entry in misconceptions_catalogue()]


# --- Staff analytics: each code per exercise, over time, with examples --------------------

# The chart covers the last CHART_DAYS days, one bar a day, or, when the graded submissions
# span longer, the last CHART_WEEKS weeks (Monday to Sunday), one bar a week.
CHART_DAYS = 30
CHART_WEEKS = 26
CHART_WIDTH = 300
CHART_HEIGHT = 60
EXAMPLES_SHOWN = 3


def misconception_choices() -> list[tuple[str, str]]:
    """Every code the grader can name, with its name: the staff list's filter."""
    return [(m.code, m.title) for m in MISCONCEPTIONS.values()]


def _bucket_starts(*, first: date, today: date) -> tuple[str, list[date]]:
    if (today - first).days < CHART_DAYS:
        return "day", [today - timedelta(days=n) for n in range(CHART_DAYS - 1, -1, -1)]
    monday = today - timedelta(days=today.weekday())
    return "week", [monday - timedelta(weeks=n) for n in range(CHART_WEEKS - 1, -1, -1)]


def _chart(counts: dict[date, int], *, starts: list[date], unit: str, title: str) -> dict[str, Any]:
    """Bars in SVG user units (the template draws them; no script, no inline style)."""
    step = CHART_WIDTH / len(starts)
    peak = max((counts.get(s, 0) for s in starts), default=0)
    bars = []
    for i, start in enumerate(starts):
        n = counts.get(start, 0)
        height = round(n / peak * CHART_HEIGHT, 1) if peak else 0
        label = start.isoformat() if unit == "day" else f"week of {start.isoformat()}"
        bars.append(
            {
                "label": label,
                "count": n,
                "x": round(i * step + step * 0.1, 2),
                "width": round(step * 0.8, 2),
                "y": round(CHART_HEIGHT - height, 1),
                "height": height,
            }
        )
    in_window = sum(b["count"] for b in bars)
    busiest = max(bars, key=lambda b: b["count"]) if in_window else None
    span = f"the last {len(starts)} {unit}s"
    summary = f"{title}: {in_window} submissions in {span}" + (
        f", most in {busiest['label']} ({busiest['count']})." if busiest else "."
    )
    return {
        "unit": unit,
        "span": span,
        "bars": bars,
        "peak": peak,
        "summary": summary,
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
    }


def _list_url(base: str, exercise: str, code: str = "", *, status: str = "") -> str:
    query = {"exercise": exercise, "misconception": code} if code else {"exercise": exercise}
    return f"{base}?{urlencode({**query, 'status': status} if status else query)}"


# What a verdict's message starts with, or holds after "stopped before every check", when the
# code ran out of time (CPU or wall clock).
TIME_LIMIT_TEXT = os.path.commonprefix([MSG_CPU_LIMIT, MSG_WALL_LIMIT]).strip()


def _errors_and_timeouts(*, list_url: str) -> dict[int, dict[str, Any]]:
    """Per exercise, the submissions that could not be evaluated (status error) and those that
    ran out of time (an error, or a failure stopped by the limit): counts and students."""
    timed_out = Q(message__contains=TIME_LIMIT_TEXT)
    error = Q(status=Submission.Status.ERROR)
    rows = (
        Submission.objects.filter(error | (Q(status=Submission.Status.FAILED) & timed_out))
        .values("exercise_id", "exercise__slug")
        .annotate(
            count=Count("id"),
            errors=Count("id", filter=error & ~timed_out),
            timeouts=Count("id", filter=timed_out),
            students=Count("user_id", distinct=True),
        )
    )
    return {
        r["exercise_id"]: {
            "count": r["count"],
            "errors": r["errors"],
            "timeouts": r["timeouts"],
            "students": r["students"],
            "list_url": _list_url(list_url, r["exercise__slug"], status="error"),
        }
        for r in rows
    }


def misconception_analytics(*, today: date | None = None) -> list[dict[str, Any]]:
    """Per exercise, each code its graded submissions show: name, explanation, submissions
    and students affected (and their share of the exercise's graded students), a chart of
    the submissions over time, the latest examples, and the staff list filtered by it."""
    today = today or timezone.localdate()
    rows = (
        Submission.objects.filter(status__in=Submission.FINAL_STATUSES)
        .order_by("-received_at", "-id")
        .values_list("pk", "exercise_id", "user_id", "user__username", "received_at", "diagnosis")
    )
    students: dict[int, set[int]] = defaultdict(set)  # exercise -> graded students
    graded: dict[int, int] = defaultdict(int)  # exercise -> graded submissions
    per_code: dict[tuple[int, str], dict[str, Any]] = {}
    first = today
    for pk, exercise_id, user_id, username, received_at, codes in rows.iterator():
        students[exercise_id].add(user_id)
        graded[exercise_id] += 1
        day = timezone.localtime(received_at).date()
        first = min(first, day)
        for code in codes or []:
            entry = per_code.setdefault(
                (exercise_id, code), {"count": 0, "users": set(), "days": [], "examples": []}
            )
            entry["count"] += 1
            entry["users"].add(user_id)
            entry["days"].append(day)
            if len(entry["examples"]) < EXAMPLES_SHOWN:  # rows come newest first
                entry["examples"].append({"submission_id": pk, "username": username})
    unit, starts = _bucket_starts(first=first, today=today)
    list_url = reverse("submissions:staff-list")
    unevaluated = _errors_and_timeouts(list_url=list_url)
    exercises = []
    for exercise in Exercise.objects.filter(pk__in=students).order_by("order", "slug"):
        codes = sorted(
            ((code, e) for (eid, code), e in per_code.items() if eid == exercise.pk),
            key=lambda ce: (-ce[1]["count"], ce[0]),
        )
        graded_students = len(students[exercise.pk])
        entries = []
        for code, e in codes:
            described = misconception_describe(code)
            counts: dict[date, int] = defaultdict(int)
            for day in e["days"]:
                key = day if unit == "day" else day - timedelta(days=day.weekday())
                counts[key] += 1
            entries.append(
                {
                    **described,
                    "count": e["count"],
                    "students": len(e["users"]),
                    "share": len(e["users"]) / graded_students if graded_students else 0.0,
                    "submission_share": e["count"] / graded[exercise.pk],
                    "chart": _chart(counts, starts=starts, unit=unit, title=described["title"]),
                    "examples": e["examples"],
                    "list_url": _list_url(list_url, exercise.slug, code),
                }
            )
        exercises.append(
            {
                "exercise": exercise,
                "graded_students": graded_students,
                "graded": graded[exercise.pk],
                "codes": entries,
                "errors": _with_share(unevaluated.get(exercise.pk), graded[exercise.pk]),
            }
        )
    return exercises


def _with_share(row: dict[str, Any] | None, graded: int) -> dict[str, Any] | None:
    return {**row, "submission_share": row["count"] / graded if graded else 0.0} if row else None
