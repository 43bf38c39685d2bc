"""Reads of exercises. Views, the admin, the grade command and the pipeline call these."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from grader.engine import limits as grading_limits
from grader.engine.executors.base import Limits
from grader.engine.grading import CheckSpec, ExerciseSpec
from grader.models import Exercise, ExerciseValidation


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


def exercise_list_published() -> QuerySet[Exercise]:
    return Exercise.objects.filter(is_published=True).order_by("order", "slug")


def exercise_get_published(*, slug: str) -> Exercise:
    exercise = Exercise.objects.filter(slug=slug, is_published=True).first()
    if exercise is None:
        raise Http404("No such exercise.")
    return exercise


def exercise_get_by_slug(*, slug: str) -> Exercise:
    """Any exercise, published or not (for instructors and the grade command)."""
    return Exercise.objects.prefetch_related("checks").get(slug=slug)


def exercise_validation_latest(*, exercise: Exercise) -> ExerciseValidation | None:
    return ExerciseValidation.objects.filter(exercise=exercise).first()
