"""Validate an exercise: the reference must pass, and every known wrong implementation must be
caught by some check. No Django imports; ``grader.services.exercises`` wraps it for a row.

Everything runs through the executor given (the sandbox in the admin and the grade command),
exactly as a student's submission would: the reference and wrong implementations as source.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grader.engine.executors.base import Executor
from grader.engine.grading import ExerciseSpec, Verdict, grade
from grader.engine.misconceptions import MISCONCEPTIONS, wrong_implementations_for
from grader.engine.status import VerdictStatus

# A check that gave no verdict on an implementation (a broken custom check): neither catches it
# nor lets it pass.
CELL_ERROR = "error"

# A fixed seed: validation is reproducible, and an instructor can rerun it after an edit.
VALIDATION_SEED = 0


@dataclass(frozen=True)
class ValidationRow:
    code: str  # the misconception
    title: str
    implementation: str  # the wrong implementation's name
    verdict: Verdict
    failed_checks: tuple[str, ...]  # names of the checks that catch it

    @property
    def caught(self) -> bool:
        # An internal error from a broken check is no catch: the student would not be charged.
        stopped = self.verdict.status != VerdictStatus.PASSED and not self.verdict.check_errors
        return bool(self.failed_checks) or stopped

    @property
    def named(self) -> bool:
        """Did the diagnosis name this row's misconception?"""
        return self.code in self.verdict.diagnosis

    def catches(self, check_name: str) -> bool:
        return check_name in self.failed_checks

    def cell(self, index: int) -> bool | str:
        """Whether the exercise's check at ``index`` catches this implementation, or
        ``CELL_ERROR`` if it could not judge it."""
        return verdict_cell(self.verdict, index, caught=True)


def verdict_cell(verdict: Verdict, index: int, *, caught: bool) -> bool | str:
    """The check at ``index`` of a verdict: failed (``caught``) or passed (not ``caught``), or
    ``CELL_ERROR`` if it could not judge. False when the verdict has no such check."""
    if any(i == index for i, _ in verdict.check_errors):
        return CELL_ERROR
    if index >= len(verdict.checks):
        return False
    return verdict.checks[index].passed != caught


@dataclass(frozen=True)
class ValidationReport:
    slug: str
    check_names: tuple[str, ...]
    check_labels: tuple[str, ...]
    reference: Verdict
    rows: tuple[ValidationRow, ...] = field(default_factory=tuple)

    @property
    def reference_passed(self) -> bool:
        return self.reference.status == VerdictStatus.PASSED

    @property
    def uncaught(self) -> tuple[str, ...]:
        """Misconceptions that no check catches (in any of their implementations)."""
        return tuple(dict.fromkeys(r.code for r in self.rows if not r.caught))

    @property
    def unnamed(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.code for r in self.rows if not r.named))

    @property
    def check_errors(self) -> tuple[tuple[str, str, str], ...]:
        """(implementation, check label, why) for every judgement a check could not make."""
        graded = [
            ("reference_solution", self.reference),
            *((r.implementation, r.verdict) for r in self.rows),
        ]
        return tuple(
            (name, self.check_labels[index] if index < len(self.check_labels) else "", detail)
            for name, verdict in graded
            for index, detail in verdict.check_errors
        )

    @property
    def ok(self) -> bool:
        return self.reference_passed and not self.uncaught and not self.check_errors


def validate_spec(
    *, spec: ExerciseSpec, reference_source: str, executor: Executor, seed: int = VALIDATION_SEED
) -> ValidationReport:
    reference = grade(spec=spec, code=reference_source, seed=seed, executor=executor)
    rows = []
    for impl in wrong_implementations_for(spec.kind):
        verdict = grade(spec=spec, code=impl.source(spec.entry_point), seed=seed, executor=executor)
        rows.append(
            ValidationRow(
                code=impl.code,
                title=MISCONCEPTIONS[impl.code].title,
                implementation=impl.name,
                verdict=verdict,
                failed_checks=tuple(
                    c.name
                    for i, c in enumerate(verdict.checks)
                    if verdict_cell(verdict, i, caught=True) is True
                ),
            )
        )
    return ValidationReport(
        slug=spec.slug,
        check_names=tuple(c.name for c in spec.checks),
        check_labels=tuple(c.label_shown() for c in spec.checks),
        reference=reference,
        rows=tuple(rows),
    )
