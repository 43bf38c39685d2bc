"""Writes and actions on exercises (the admin's Validate action calls these)."""

from __future__ import annotations

from grader.engine.executors.base import Executor
from grader.engine.validation import ValidationReport, validate_spec
from grader.models import Exercise
from grader.selectors.exercises import exercise_spec_get


def exercise_validate(*, exercise: Exercise, executor: Executor) -> ValidationReport:
    """Run the reference (must pass) and every known wrong implementation of the exercise's kind
    through ``executor`` (the sandbox), and report which checks catch which misconception."""
    return validate_spec(
        spec=exercise_spec_get(exercise=exercise),
        reference_source=exercise.reference_solution,
        executor=executor,
    )
