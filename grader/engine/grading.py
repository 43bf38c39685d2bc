"""Grade one submission: ``grade(*, spec, code, seed, executor) -> Verdict``. No Django imports.

One ``executor.run`` per grade, with every call batched (the checks' calls, then the
diagnosis's), because a run is what costs time in the sandbox. The executor only computes the
student's outputs; the checks and the diagnosis judge them here, in trusted code.

Verdict statuses:
- ``passed``: every check passed; ``failed``: the code ran and some check failed;
- ``error``: the code could not be evaluated (syntax error, missing entry point, crash at
  import, or a limit hit before any check had all its results);
- ``internal-error``: our fault (the sandbox broke, a check crashed); never charged, retried.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from grader.engine import checks as check_library
from grader.engine.checks import JudgeInternalError, Probe, messages, probe_expected
from grader.engine.diagnosis import diagnose, fixed_probes
from grader.engine.executors.base import (
    Call,
    CallResult,
    Executor,
    Gate,
    Limits,
    RunResult,
    RunStatus,
)

log = logging.getLogger("grader.engine.grading")

PASSED = "passed"
FAILED = "failed"
ERROR = "error"
INTERNAL_ERROR = "internal-error"
STATUSES = (PASSED, FAILED, ERROR, INTERNAL_ERROR)

VISIBILITY_SHOWN = "shown"
VISIBILITY_HIDDEN = "hidden"
VISIBILITY_AFTER_DEADLINE = "after-deadline"

# Student-facing summaries (the per-check messages say the rest).
MSG_PASSED = "All {n} checks passed."
MSG_FAILED = "{failed} of {n} checks failed."
MSG_INTERNAL = "The grader had an internal problem; this is not your fault. Please try again."
MSG_STOPPED = "Your code stopped before every check could run: {reason}"
MSG_CHECK_NOT_RUN = "This check could not run: {reason}"
MSG_NO_CHECKS = "This exercise has no checks yet."


@dataclass(frozen=True)
class CheckSpec:
    """One check of an exercise, as authored (an ``ExerciseCheck`` row)."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    weight: float = 1.0
    label: str = ""
    visibility: str = VISIBILITY_SHOWN


@dataclass(frozen=True)
class ExerciseSpec:
    """Everything grading needs to know about an exercise; no database behind it."""

    slug: str
    kind: str
    entry_point: str
    checks: tuple[CheckSpec, ...]
    limits: Limits = field(default_factory=Limits)
    diagnose: bool = True


@dataclass(frozen=True)
class CheckResult:
    name: str
    label: str
    passed: bool
    message: str
    weight: float
    visibility: str


_CHECK_FIELDS = tuple(f.name for f in fields(CheckResult))


@dataclass(frozen=True)
class Verdict:
    status: str
    score: float
    checks: tuple[CheckResult, ...] = ()
    diagnosis: tuple[str, ...] = ()
    message: str = ""
    stdout: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types, as stored in the ``Submission`` fields of the same names."""
        return {
            "status": self.status,
            "score": float(self.score),
            # Field by field: dataclasses.asdict deep-copies recursively, at ten times the cost.
            "checks": [{f: getattr(c, f) for f in _CHECK_FIELDS} for c in self.checks],
            "diagnosis": list(self.diagnosis),
            "message": self.message,
            "stdout": self.stdout,
        }


def check_rng(seed: int, index: int, name: str) -> np.random.Generator:
    """Each check's inputs depend on the seed, its position and its name only, so editing one
    check of an exercise leaves the other checks' hidden inputs unchanged."""
    return np.random.default_rng([int(seed) % 2**64, index, zlib.crc32(name.encode())])


@dataclass
class _Planned:
    spec: CheckSpec
    label: str
    params: dict[str, Any]
    probes: list[Probe]
    start: int  # index of its first call in the batch


def _internal(stdout: str = "") -> Verdict:
    return Verdict(status=INTERNAL_ERROR, score=0.0, message=MSG_INTERNAL, stdout=stdout)


@dataclass(frozen=True)
class Plan:
    """One grade's hidden inputs and the reference outputs they need, prepared ahead: a worker
    prepares one while idle, for the seed it offers at its next claim (grader.services)."""

    spec: ExerciseSpec
    seed: int
    planned: tuple[_Planned, ...]
    calls: tuple[Call, ...]
    diag: tuple[Any, ...]


def grade_plan(*, spec: ExerciseSpec, seed: int) -> Plan:
    """The plan ``grade`` would make for this seed, references computed. Raises if a check
    cannot be prepared (``grade`` then reports it)."""
    planned, calls, diag = _plan(spec, seed)
    _expect(spec.kind, planned)
    return Plan(spec, seed, tuple(planned), tuple(calls), tuple(diag))


def grade(
    *, spec: ExerciseSpec, code: str, seed: int, executor: Executor, plan: Plan | None = None
) -> Verdict:
    """Run ``code`` once through ``executor`` on every hidden input, and judge the outputs.

    ``plan``, if it was prepared for this very spec and seed, saves planning (the same inputs:
    they depend on the seed and the spec only)."""
    try:
        if plan is not None and plan.spec is spec and plan.seed == seed:
            planned, calls, diag = list(plan.planned), list(plan.calls), list(plan.diag)
        else:
            planned, calls, diag = _plan(spec, seed)
    except Exception:  # ParamsError, UnknownCheck, or a bug in a check: ours, not the student's
        log.exception("exercise %s has a check that cannot be prepared", spec.slug)
        return _internal()
    if not planned:
        return Verdict(status=ERROR, score=0.0, message=MSG_NO_CHECKS)

    n_check_calls = len(calls) - len(diag)
    at_gate = _GateJudge(spec, planned)
    gate = (
        Gate(n_check_calls, go_on=at_gate.go_on, meanwhile=at_gate.rest, progress=at_gate.so_far)
        if diag
        else None
    )
    try:
        run = executor.run(
            code=code,
            entry_point=spec.entry_point,
            calls=calls,
            limits=spec.limits,
            while_running=lambda: _expect(spec.kind, planned),
            gate=gate,
        )
    except Exception:
        log.exception("executor failed on %s", spec.slug)
        return _internal()
    if run.status == RunStatus.INTERNAL:
        return _internal(run.stdout)
    if run.status != RunStatus.OK and not run.calls:
        # Nothing ran: syntax error, missing entry point, crash at import, or a limit hit at once.
        return Verdict(status=ERROR, score=0.0, message=run.message, stdout=run.stdout)

    try:
        early = at_gate.finish() if at_gate.results is not None else None
        return _judge(spec, planned, diag, run, n_check_calls=n_check_calls, early=early)
    except Exception:
        # A check that crashes on some output is our bug, not the student's.
        log.exception("judging failed on %s", spec.slug)
        return _internal(run.stdout)


def _expect(kind: str, planned: Sequence[_Planned]) -> None:
    """Every reference output the checks compare with: computed while the student's code runs."""
    for item in planned:
        for probe in item.probes:
            probe_expected(kind, probe)


def _plan(spec: ExerciseSpec, seed: int) -> tuple[list[_Planned], list[Call], list[Any]]:
    planned: list[_Planned] = []
    calls: list[Call] = []
    for index, cs in enumerate(spec.checks):
        check = check_library.check_get(cs.name)
        if spec.kind not in check.kinds:
            raise ValueError(f"check {cs.name!r} cannot judge a {spec.kind!r} exercise")
        params = check.clean_params(cs.params)
        probes = check.prepare(params, check_rng(seed, index, cs.name), spec.kind)
        planned.append(_Planned(cs, cs.label or check.label, params, probes, len(calls)))
        calls.extend(p.call for p in probes)
    diag = list(fixed_probes(spec.kind)) if spec.diagnose else []
    calls.extend(p.call for p in diag)
    return planned, calls, diag


def _judge(
    spec: ExerciseSpec,
    planned: Sequence[_Planned],
    diag: Sequence[Any],
    run: RunResult,
    *,
    n_check_calls: int,
    early: list[CheckResult] | None = None,
) -> Verdict:
    stopped = run.status != RunStatus.OK
    results: list[CallResult | None] = list(run.calls)
    total = n_check_calls + len(diag)
    if len(results) > total:
        raise JudgeInternalError("the executor returned more results than calls")
    results += [None] * (total - len(results))

    # Judged at the gate already: every check had its results then, and they have not changed.
    if early is not None:
        outcomes, judged_any = early, True
    else:
        outcomes, judged_any = _judge_checks(spec, planned, results, run.message)

    if stopped and not judged_any:
        # A limit hit before any check had its results: the code could not be evaluated.
        return Verdict(status=ERROR, score=0.0, message=run.message, stdout=run.stdout)

    total_weight = sum(max(c.weight, 0.0) for c in outcomes)
    earned = sum(max(c.weight, 0.0) for c in outcomes if c.passed)
    score = earned / total_weight if total_weight > 0 else float(all(c.passed for c in outcomes))
    n_failed = sum(not c.passed for c in outcomes)
    # Only a failing submission is diagnosed (it also saves running the wrong implementations).
    diagnosable = diag and (n_failed or stopped)
    diagnosis = tuple(diagnose(spec.kind, diag, results[n_check_calls:])) if diagnosable else ()

    if n_failed == 0 and not stopped:
        return Verdict(
            status=PASSED,
            score=1.0,
            checks=tuple(outcomes),
            # A passing submission is never told it has a misconception.
            diagnosis=(),
            message=MSG_PASSED.format(n=len(outcomes)),
            stdout=run.stdout,
        )
    message = MSG_FAILED.format(failed=n_failed, n=len(outcomes))
    if stopped:
        message = MSG_STOPPED.format(reason=run.message)
    return Verdict(
        status=FAILED,
        score=min(score, 1.0),
        checks=tuple(outcomes),
        diagnosis=diagnosis,
        message=message,
        stdout=run.stdout,
    )


class _GateJudge:
    """Judges the checks at the gate, while the child waits there: only until the first check
    that fails (that is enough to want the diagnosis's calls), and the rest meanwhile, while
    those calls run. A submission that passes is judged whole there and is never diagnosed."""

    def __init__(self, spec: ExerciseSpec, planned: Sequence[_Planned]) -> None:
        self.spec, self.planned = spec, planned
        self.results: list[CallResult] | None = None
        self.outcomes: list[CheckResult] = []

    def so_far(self, results: Sequence[CallResult]) -> bool:
        """Judge, in order, the checks whose calls are all done (up to the first failure);
        True once one failed: the diagnosis's calls are wanted then, whatever comes."""
        if self.outcomes and not self.outcomes[-1].passed:
            return True
        for item in self.planned[len(self.outcomes) :]:
            if len(results) < item.start + len(item.probes):
                return False
            outcome, _ = _judge_check(self.spec, item, results, reason="")
            self.outcomes.append(outcome)
            if not outcome.passed:
                return True
        return False

    def go_on(self, results: Sequence[CallResult]) -> bool:
        self.results = list(results)
        self.so_far(self.results)
        return not all(c.passed for c in self.outcomes)

    def rest(self) -> None:
        assert self.results is not None
        for item in self.planned[len(self.outcomes) :]:
            self.outcomes.append(_judge_check(self.spec, item, self.results, reason="")[0])

    def finish(self) -> list[CheckResult]:
        """Every check's outcome (what ``rest`` did not get to, if it failed, is judged now)."""
        self.rest()
        return self.outcomes


def _judge_check(
    spec: ExerciseSpec, item: _Planned, results: Sequence[CallResult | None], reason: str
) -> tuple[CheckResult, bool]:
    """One check's outcome from its calls' results (``reason``: why some are missing), and
    whether it had all of them."""
    mine = results[item.start : item.start + len(item.probes)]
    check = check_library.check_get(item.spec.name)
    judged = False
    if not item.probes:
        passed, message = False, messages.NO_PROBES
    elif len(mine) < len(item.probes) or any(r is None for r in mine):
        passed, message = False, MSG_CHECK_NOT_RUN.format(reason=reason)
    else:
        outcome = check.judge(item.params, item.probes, mine, spec.kind)
        passed, message, judged = outcome.passed, outcome.message, True
    result = CheckResult(
        name=item.spec.name,
        label=item.label,
        passed=passed,
        message=message,
        weight=float(item.spec.weight),
        visibility=item.spec.visibility,
    )
    return result, judged


def _judge_checks(
    spec: ExerciseSpec,
    planned: Sequence[_Planned],
    results: Sequence[CallResult | None],
    reason: str,
) -> tuple[list[CheckResult], bool]:
    """Each check's outcome, and whether any check had all of its results."""
    judged = [_judge_check(spec, item, results, reason) for item in planned]
    return [outcome for outcome, _ in judged], any(ok for _, ok in judged)


def visible_message(*, check: Mapping[str, Any], deadline_passed: bool) -> str | None:
    """The message a student may see for a stored check result, or None if it is withheld."""
    visibility = check.get("visibility", VISIBILITY_SHOWN)
    if visibility == VISIBILITY_HIDDEN:
        return None
    if visibility == VISIBILITY_AFTER_DEADLINE and not deadline_passed:
        return None
    return str(check.get("message", ""))
