"""Specs of the built-in exercises, without a database."""

from __future__ import annotations

from grader.engine.exercise_content import EXERCISES
from grader.engine.grading import CheckSpec, ExerciseSpec

KIND_OF_SLUG = {e["slug"]: e["kind"] for e in EXERCISES}


def builtin_spec(kind: str) -> ExerciseSpec:
    data = next(e for e in EXERCISES if e["kind"] == kind)
    return ExerciseSpec(
        slug=data["slug"],
        kind=kind,
        entry_point=data["entry_point"],
        checks=tuple(
            CheckSpec(name=c["name"], params=c["params"], weight=c["weight"], label=c["label"])
            for c in data["checks"]
        ),
    )
