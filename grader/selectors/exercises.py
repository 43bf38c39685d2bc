"""Reads of exercises. Views, the admin, the grade command and the pipeline call these."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import Count, Max, Q, QuerySet
from django.http import Http404

from common.rendering import render_markdown
from grader.engine import limits as grading_limits
from grader.engine.executors.base import Limits
from grader.engine.grading import CheckSpec, ExerciseSpec
from grader.engine.sandbox import messages as sandbox_messages
from grader.models import Exercise, ExerciseValidation, Submission

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

# A student's progress on an exercise, as the list shows it (in words, not colour only).
PROGRESS_SOLVED = "solved"
PROGRESS_ATTEMPTED = "attempted"
PROGRESS_NOT_STARTED = "not-started"
PROGRESS_LABELS = {
    PROGRESS_SOLVED: "Solved",
    PROGRESS_ATTEMPTED: "Attempted",
    PROGRESS_NOT_STARTED: "Not started",
}


def exercise_limits(*, exercise: Exercise) -> Limits:
    """The exercise's limits, clamped to the sandbox's bounds (``grader.engine.limits``).

    ``time_limit_seconds`` is CPU time; the wall clock gets twice that, so a busy loop is
    reported as a CPU limit and a sleeping one as a wall-clock limit.
    """
    return grading_limits.clamp(
        Limits(
            wall_seconds=2.0 * exercise.time_limit_seconds,
            cpu_seconds=exercise.time_limit_seconds,
            memory_mb=exercise.memory_limit_mb,
        )
    )


def exercise_limits_text(*, exercise: Exercise) -> str:
    """The limits as the page and the API state them: the values the sandbox enforces, in the
    words of its messages ("5 s of CPU time (10 s of wall-clock time), 512 MB of memory")."""
    limits = exercise_limits(exercise=exercise)
    return sandbox_messages.LIMITS_TEXT.format(
        cpu=sandbox_messages.CPU_TIME.format(seconds=limits.cpu_seconds),
        wall=sandbox_messages.WALL_TIME.format(seconds=limits.wall_seconds),
        memory=sandbox_messages.MEMORY.format(mb=limits.memory_mb),
    )


def exercise_spec_get(*, exercise: Exercise) -> ExerciseSpec:
    """What ``grader.engine.grading.grade`` needs, read once from the database."""
    return ExerciseSpec(
        slug=exercise.slug,
        kind=exercise.kind,
        entry_point=exercise.entry_point,
        checks=tuple(
            CheckSpec(
                name=check.name,
                params=dict(check.params or {}),
                weight=float(check.weight),
                label=check.label,
                visibility=check.visibility,
            )
            for check in exercise.checks.all()
        ),
        limits=exercise_limits(exercise=exercise),
    )


# (exercise pk, updated_at) -> its spec, in this worker process. Bounded: a course has a
# handful of exercises, and an edited exercise's old entry is dropped when its new one comes.
_SPECS: dict[int, tuple[object, ExerciseSpec]] = {}


# exercise pk -> (its version as the claim returned it, the row), in this worker process.
_EXERCISES: dict[int, tuple[object, Exercise]] = {}


def exercise_for_grading(*, exercise_id: int, version: object) -> Exercise:
    """The exercise of a claimed submission, read again only when ``version`` (its updated_at,
    as the claim's statement returned it: compared as the database gives it, never parsed)
    differs from the one held: every change to an exercise or one of its checks moves it (see
    ExerciseCheck.save), so the database stays the source of truth and a grade saves a read."""
    held = _EXERCISES.get(exercise_id)
    if held is not None and held[0] == version:
        return held[1]
    exercise = Exercise.objects.get(pk=exercise_id)
    _EXERCISES[exercise_id] = (version, exercise)
    return exercise


def exercise_spec_for_grading(*, exercise: Exercise) -> ExerciseSpec:
    """exercise_spec_get, without reading the checks again while the exercise is unchanged.

    The claim already read the exercise's row, so its updated_at (which every change to a
    check moves, see ExerciseCheck.save) tells whether the spec held here is still current:
    the database stays the source of truth, and a grade saves a query.
    """
    held = _SPECS.get(exercise.pk)
    if held is not None and held[0] == exercise.updated_at:
        return held[1]
    spec = exercise_spec_get(exercise=exercise)
    _SPECS[exercise.pk] = (exercise.updated_at, spec)
    return spec


def exercise_specs_forget() -> None:
    """Drop the specs and exercises held in this process (tests roll the database back under
    them)."""
    _SPECS.clear()
    _EXERCISES.clear()


def exercise_published_q(*, via: str = "") -> Q:
    """The one rule of what a student may see: published exercises only. ``via`` is the path
    to the exercise from the model queried ("exercise__", "submission__exercise__"), so every
    student-facing read of a submission, Run or notice filters drafts the same way: a draft's
    title must not reach a student through any page the exercise page itself refuses."""
    return Q(**{f"{via}is_published": True})


def exercise_list_published() -> QuerySet[Exercise]:
    return Exercise.objects.filter(exercise_published_q()).order_by("order", "slug")


def exercise_list_with_progress(*, user: AbstractBaseUser) -> QuerySet[Exercise]:
    """The published exercises, each annotated with this user's ``n_submissions``,
    ``n_passed`` and ``best_score`` (None before a verdict): one query for the whole list."""
    qs = exercise_list_published()
    if not user.is_authenticated:
        return qs
    mine = Q(submissions__user=user)
    graded = mine & Q(submissions__status__in=(Submission.Status.PASSED, Submission.Status.FAILED))
    return qs.annotate(
        n_submissions=Count("submissions", filter=mine),
        n_passed=Count(
            "submissions", filter=mine & Q(submissions__status=Submission.Status.PASSED)
        ),
        best_score=Max("submissions__score", filter=graded),
    )


def exercise_progress(*, exercise: Exercise) -> str:
    """solved / attempted / not-started, from exercise_list_with_progress's annotations."""
    if getattr(exercise, "n_passed", 0):
        return PROGRESS_SOLVED
    if getattr(exercise, "n_submissions", 0):
        return PROGRESS_ATTEMPTED
    return PROGRESS_NOT_STARTED


def exercise_get_published(*, slug: str) -> Exercise:
    """The published exercise of this slug, or 404."""
    return _published(Exercise.objects.all(), slug=slug)


# What a submit reads of its exercise (grader.services.submitting and the response's slug): not
# the statement or the reference solution, the row's largest columns, on every submit.
_SUBMIT_FIELDS = ("slug", "is_published", "starter_code")


def exercise_get_submittable(*, slug: str) -> Exercise:
    """The published exercise of this slug with what a submit reads of it, or 404."""
    return _published(Exercise.objects.only(*_SUBMIT_FIELDS), slug=slug)


def _published(exercises: QuerySet[Exercise], *, slug: str) -> Exercise:
    try:
        exercise = exercises.get(slug=slug)
    except Exercise.DoesNotExist:
        raise Http404("No such exercise.") from None
    if not exercise.is_published:
        raise Http404("No such exercise.")
    return exercise


def exercise_get_by_slug(*, slug: str) -> Exercise:
    """Any exercise, published or not (for instructors and the grade command)."""
    return Exercise.objects.prefetch_related("checks").get(slug=slug)


def exercise_validation_latest(*, exercise: Exercise) -> ExerciseValidation | None:
    return ExerciseValidation.objects.filter(exercise=exercise).first()


# The first Markdown heading of a statement (the "### Contract" of the built-in ones).
_FIRST_HEADING = re.compile(r"^#{1,6}[ \t]", re.MULTILINE)


@dataclass(frozen=True)
class StatementParts:
    """A statement as sanitised HTML: its essentials (what to write), then the rest."""

    essentials_html: str
    rest_html: str


def exercise_statement_parts(*, exercise: Exercise) -> StatementParts:
    """The statement split at its first heading: the paragraph naming the function to write
    goes above the editor, the contract and the checks below it (folded on a phone).

    A statement without a heading is all essentials; one that starts with a heading has none.
    """
    text = exercise.statement
    found = _FIRST_HEADING.search(text)
    cut = found.start() if found else len(text)
    essentials, rest = text[:cut].strip(), text[cut:].strip()
    return StatementParts(
        essentials_html=render_markdown(essentials) if essentials else "",
        rest_html=render_markdown(rest) if rest else "",
    )
