"""Writes and actions on exercises (the admin's Validate action calls these)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from grader.engine.executors.base import Executor
from grader.engine.validation import ValidationReport, validate_spec, verdict_cell
from grader.models import Exercise, ExerciseValidation
from grader.publish import VALIDATE_EXERCISE
from grader.selectors.exercises import exercise_spec_get
from grader.services.jobs import job_request

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

log = logging.getLogger(__name__)


def exercise_validate(*, exercise: Exercise, executor: Executor) -> ValidationReport:
    """Run the reference (must pass) and every known wrong implementation of the exercise's kind
    through ``executor`` (the sandbox), and report which checks catch which misconception."""
    return validate_spec(
        spec=exercise_spec_get(exercise=exercise),
        reference_source=exercise.reference_solution,
        executor=executor,
    )


def validation_report_view(report: ValidationReport) -> dict[str, Any]:
    """The report in plain JSON types, shaped as the admin page shows it."""
    reference = report.reference
    return {
        "reference_passed": report.reference_passed,
        "reference": {
            "status": reference.status,
            "message": reference.message,
            "score": float(reference.score),
            "diagnosis": list(reference.diagnosis),
        },
        "uncaught": list(report.uncaught),
        "check_labels": list(report.check_labels),
        # Cell by cell, in the exercise's order (two checks may share a name): True, False or
        # "error" (the check could not judge).
        "reference_cells": [
            verdict_cell(reference, i, caught=False) for i in range(len(report.check_names))
        ],
        "check_errors": [
            {"implementation": name, "check": label, "detail": detail}
            for name, label, detail in report.check_errors
        ],
        "rows": [
            {
                "code": row.code,
                "title": row.title,
                "implementation": row.implementation,
                "caught": row.caught,
                "named": row.named,
                "score": float(row.verdict.score),
                "diagnosis": list(row.verdict.diagnosis),
                "cells": [row.cell(i) for i in range(len(report.check_names))],
            }
            for row in report.rows
        ],
    }


def exercise_validation_request(
    *, exercise: Exercise, user: AbstractBaseUser
) -> ExerciseValidation:
    """Ask a worker to validate the exercise: the web process never runs a sandbox itself."""
    return job_request(
        model=ExerciseValidation, task=VALIDATE_EXERCISE, exercise=exercise, user=user
    )


def exercise_validation_run(*, validation_id: int, executor: Executor) -> ExerciseValidation | None:
    """Compute a requested validation (in a worker). Returns None if another worker has it."""
    validation = ExerciseValidation.claim(validation_id)
    if validation is None:
        return None
    try:
        report = exercise_validate(exercise=validation.exercise, executor=executor)
    except Exception as exc:
        log.exception("validation %s failed", validation_id)
        validation.error = str(exc)[:2000]
        validation.finish(failed=True, fields=("error",))
    else:
        validation.report = validation_report_view(report)
        validation.finish(failed=False, fields=("report",))
    return validation
