"""Grade one submission: ``grade(*, spec, code, seed, executor) -> Verdict``. No Django imports.

One run per grade, because a run is what costs time in the sandbox: the checks' calls (and
the pictures', if asked for) first, then, only if a check failed, the diagnosis's calls as the
run's second phase. The executor only computes the student's outputs and never calls back; the
checks and the diagnosis judge them here, in trusted code, between the phases.

An instructor's custom check judges in untrusted code: its ``judge`` refers the judgement to a
sandbox run of its own (``checks.Referral``), started here once the student's run has ended, so
the instructor's code sees only arrays. Until then it counts as failing, so the diagnosis's calls
are asked for in the student's run, in case it fails.

Verdict statuses (``grader.engine.status``): ``passed``, ``failed``; ``error`` also when a limit
hit before any check had all its results; ``internal-error`` when the sandbox broke, a check
crashed or a custom check gave no verdict.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from grader.engine import checks as check_library
from grader.engine import messages
from grader.engine.checks import (
    CheckNotRun,
    JudgeInternalError,
    Probe,
    Referral,
    probe_expected,
)
from grader.engine.checks import custom as custom_check
from grader.engine.diagnosis import diagnose, fixed_probes
from grader.engine.executors.base import (
    Call,
    CallResult,
    Executor,
    Limits,
    Run,
    RunRequest,
    RunResult,
    RunStatus,
)
from grader.engine.sandbox.messages import MSG_INTERNAL
from grader.engine.status import VerdictStatus

log = logging.getLogger("grader.engine.grading")

VISIBILITY_SHOWN = "shown"
VISIBILITY_HIDDEN = "hidden"
VISIBILITY_AFTER_DEADLINE = "after-deadline"

# Student-facing summaries (the per-check messages say the rest).
MSG_PASSED = "All {n} checks passed."
MSG_FAILED = "{failed} of {n} checks failed."
MSG_STOPPED = "Your code stopped before every check could run: {reason}"
MSG_CHECK_NOT_RUN = "This check could not run: {reason}"
MSG_NO_CHECKS = "This exercise has no checks yet."
MSG_CUSTOM_NOT_RUN = custom_check.MSG_NOT_RUN


@dataclass(frozen=True)
class CheckSpec:
    """One check of an exercise, as authored (an ``ExerciseCheck`` row)."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    weight: float = 1.0
    label: str = ""
    visibility: str = VISIBILITY_SHOWN

    def label_shown(self) -> str:
        """The instructor's label, or the check's own from these parameters (the one a
        verdict shows); the name when the check or its parameters are unknown."""
        if self.label:
            return self.label
        try:
            check = check_library.check_get(self.name)
            return check.label_for(check.clean_params(self.params))
        except (check_library.UnknownCheck, check_library.ParamsError):
            return self.name


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
    status: VerdictStatus
    score: float
    checks: tuple[CheckResult, ...] = ()
    diagnosis: tuple[str, ...] = ()
    message: str = ""
    stdout: str = ""
    # The pictures' calls' results, if the grade was asked for them (not stored as such).
    pictures: tuple[CallResult, ...] = field(default=(), compare=False, repr=False)
    # Checks that could not judge through the exercise's fault (a custom check gave no
    # verdict): (index in ``checks``, why, for the instructor). Never stored nor shown to
    # students; Validate shows them.
    check_errors: tuple[tuple[int, str], ...] = field(default=(), compare=False)

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
    return Verdict(
        status=VerdictStatus.INTERNAL_ERROR, score=0.0, message=MSG_INTERNAL, stdout=stdout
    )


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
    *,
    spec: ExerciseSpec,
    code: str,
    seed: int,
    executor: Executor,
    plan: Plan | None = None,
    pictures: Sequence[Call] = (),
) -> Verdict:
    """Run ``code`` once through ``executor`` on every hidden input, and judge the outputs.

    ``plan``, if it was prepared for this very spec and seed, saves planning (the same inputs:
    they depend on the seed and the spec only). ``pictures``: calls whose results the caller
    wants as well (``Verdict.pictures``), run right after the checks' in the same child, one
    module load per submission; a limit they hit does not change the verdict."""
    return _grade(spec, code, seed, executor, plan, tuple(pictures))


def _grade(
    spec: ExerciseSpec,
    code: str,
    seed: int,
    executor: Executor,
    plan: Plan | None,
    pictures: tuple[Call, ...],
) -> Verdict:
    try:
        if plan is not None and plan.spec is spec and plan.seed == seed:
            planned, calls, diag = list(plan.planned), list(plan.calls), list(plan.diag)
        else:
            planned, calls, diag = _plan(spec, seed)
    except Exception:  # ParamsError, UnknownCheck, or a bug in a check: ours, not the student's
        log.exception("exercise %s has a check that cannot be prepared", spec.slug)
        return _internal()
    if not planned:
        return Verdict(status=VerdictStatus.ERROR, score=0.0, message=MSG_NO_CHECKS)

    n_check = len(calls) - len(diag)
    request = RunRequest(
        code=code,
        entry_point=spec.entry_point,
        calls=(*calls[:n_check], *pictures),
        limits=spec.limits,
        second_phase=bool(diag),
    )
    try:
        with executor.start(request) as run:
            _expect_quietly(spec, planned)  # while the student's code runs
            judged = _phases(spec, planned, diag, calls[n_check:], run, n_check, len(pictures))
        if isinstance(judged, Verdict):
            return judged
        # The student's run is closed: the executor is free for the referred judgements.
        errors = _refer(spec, judged.outcomes, judged.referrals, executor)
        verdict = _verdict(
            spec, judged.outcomes, judged.judged_any, diag, judged.diag_results, judged.last
        )
        if errors:
            verdict = replace(
                verdict,
                status=VerdictStatus.INTERNAL_ERROR,
                score=0.0,
                message=MSG_INTERNAL,
                diagnosis=(),
                check_errors=tuple(errors),
            )
        return replace(verdict, pictures=judged.pictures)
    except Exception:
        log.exception("grading failed on %s", spec.slug)
        return _internal()


@dataclass
class _Judged:
    """The student's run, judged except for the referred judgements."""

    outcomes: list[CheckResult]
    referrals: dict[int, Referral]  # index in outcomes -> the judgement to run
    judged_any: bool
    diag_results: list[CallResult | None]
    last: RunResult
    pictures: tuple[CallResult, ...]


def _refer(
    spec: ExerciseSpec,
    outcomes: list[CheckResult],
    referrals: Mapping[int, Referral],
    executor: Executor,
) -> list[tuple[int, str]]:
    """Run each referred judgement in a sandbox run of its own and put its outcome in place;
    returns the checks that gave no verdict, with why (the exercise's fault, logged)."""
    errors = []
    for index, referral in referrals.items():
        with executor.start(referral.request) as run:
            result = run.wait()
        if result.status.verdict == VerdictStatus.INTERNAL_ERROR:
            raise JudgeInternalError("the sandbox broke while running a custom check")
        try:
            outcome = referral.conclude(result)
        except CheckNotRun as exc:
            log.error("exercise %s: check %d could not run: %s", spec.slug, index, exc.detail)
            errors.append((index, exc.detail))
            outcome_passed, message = False, MSG_CUSTOM_NOT_RUN
        else:
            outcome_passed, message = outcome.passed, outcome.message
        outcomes[index] = replace(outcomes[index], passed=outcome_passed, message=message)
    return errors


def _phases(
    spec: ExerciseSpec,
    planned: Sequence[_Planned],
    diag: Sequence[Any],
    diag_calls: Sequence[Call],
    run: Run,
    n_check: int,
    n_pictures: int,
) -> Verdict | _Judged:
    """Judge each check as soon as its calls are done; only if one failed, run the diagnosis's
    calls as the second phase (and judge the remaining checks while they compute). A verdict
    if the run alone decides it."""
    outcomes: list[CheckResult] = []
    referrals: dict[int, Referral] = {}
    for item in planned:
        # The checks judged here while the child computes the next ones' calls.
        need = item.start + len(item.probes)
        so_far = run.wait(at_least=need)
        if len(so_far.calls) < need or so_far.status != RunStatus.OK:
            break  # the run ended first: judged below with the reason
        outcome, _, referral = _judge_check(spec, item, so_far.calls, reason="")
        if referral is not None:
            referrals[len(outcomes)] = referral
        outcomes.append(outcome)
        if not outcomes[-1].passed and diag:
            break  # the diagnosis is wanted: ask for it as soon as the first phase is done
    first = run.wait()
    if len(first.calls) > n_check + n_pictures:
        raise JudgeInternalError("the executor returned more results than calls")
    pictures = tuple(first.calls[n_check:])
    can_go_on = first.status == RunStatus.OK  # a run that ended has no second phase
    if len(first.calls) >= n_check > 0 and first.status.verdict != VerdictStatus.INTERNAL_ERROR:
        # Every check's call finished: a limit hit among the pictures' is not the checks' fault.
        first = RunResult(RunStatus.OK, list(first.calls[:n_check]), "", first.stdout)
    if first.status.verdict == VerdictStatus.INTERNAL_ERROR:
        return _internal(first.stdout)
    if first.status != RunStatus.OK and not first.calls:
        # Nothing ran: syntax error, missing entry point, crash at import, or a limit at once.
        return Verdict(
            status=VerdictStatus.ERROR, score=0.0, message=first.message, stdout=first.stdout
        )
    wanted = bool(diag) and can_go_on and not all(c.passed for c in outcomes)
    if wanted:
        run.more(diag_calls)
    results: list[CallResult | None] = [*first.calls, *[None] * (n_check - len(first.calls))]
    judged_any = bool(outcomes)
    for item in planned[len(outcomes) :]:
        outcome, judged, referral = _judge_check(spec, item, results, first.message)
        if referral is not None:
            referrals[len(outcomes)] = referral
        outcomes.append(outcome)
        judged_any = judged_any or judged
        if not outcome.passed and diag and can_go_on and not wanted:
            run.more(diag_calls)  # the rest of the checks are judged while these compute
            wanted = True
    last = run.wait() if wanted else first
    if last.status.verdict == VerdictStatus.INTERNAL_ERROR:
        return _internal(last.stdout)
    diag_results: list[CallResult | None] = list(last.calls[n_check + n_pictures :])
    diag_results += [None] * (len(diag) - len(diag_results))
    return _Judged(outcomes, referrals, judged_any, diag_results, last, pictures)


def _expect(kind: str, planned: Sequence[_Planned]) -> None:
    """Every reference output the checks compare with: computed while the student's code runs."""
    for item in planned:
        for probe in item.probes:
            probe_expected(kind, probe)


def _expect_quietly(spec: ExerciseSpec, planned: Sequence[_Planned]) -> None:
    try:
        _expect(spec.kind, planned)
    except Exception:  # the checks compute what they still miss when judging, and say why
        log.exception("reference outputs failed on %s", spec.slug)


def _plan(spec: ExerciseSpec, seed: int) -> tuple[list[_Planned], list[Call], list[Any]]:
    planned: list[_Planned] = []
    calls: list[Call] = []
    for index, cs in enumerate(spec.checks):
        check = check_library.check_get(cs.name)
        if spec.kind not in check.kinds:
            raise ValueError(f"check {cs.name!r} cannot judge a {spec.kind!r} exercise")
        params = check.clean_params(cs.params)
        probes = check.prepare(params, check_rng(seed, index, cs.name), spec.kind)
        planned.append(
            _Planned(cs, cs.label or check.label_for(params), params, probes, len(calls))
        )
        calls.extend(p.call for p in probes)
    diag = list(fixed_probes(spec.kind)) if spec.diagnose else []
    calls.extend(p.call for p in diag)
    return planned, calls, diag


def _verdict(
    spec: ExerciseSpec,
    outcomes: Sequence[CheckResult],
    judged_any: bool,
    diag: Sequence[Any],
    diag_results: Sequence[CallResult | None],
    run: RunResult,
) -> Verdict:
    stopped = run.status != RunStatus.OK
    if stopped and not judged_any:
        # A limit hit before any check had its results: the code could not be evaluated.
        return Verdict(
            status=VerdictStatus.ERROR, score=0.0, message=run.message, stdout=run.stdout
        )

    total_weight = sum(max(c.weight, 0.0) for c in outcomes)
    earned = sum(max(c.weight, 0.0) for c in outcomes if c.passed)
    score = earned / total_weight if total_weight > 0 else float(all(c.passed for c in outcomes))
    n_failed = sum(not c.passed for c in outcomes)
    # Only a failing submission is diagnosed (it also saves running the wrong implementations).
    diagnosable = diag and (n_failed or stopped)
    diagnosis = tuple(diagnose(spec.kind, diag, diag_results)) if diagnosable else ()

    if n_failed == 0 and not stopped:
        return Verdict(
            status=VerdictStatus.PASSED,
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
        status=VerdictStatus.FAILED,
        score=min(score, 1.0),
        checks=tuple(outcomes),
        diagnosis=diagnosis,
        message=message,
        stdout=run.stdout,
    )


def _judge_check(
    spec: ExerciseSpec, item: _Planned, results: Sequence[CallResult | None], reason: str
) -> tuple[CheckResult, bool, Referral | None]:
    """One check's outcome from its calls' results (``reason``: why some are missing), whether
    it had all of them, and the judgement it refers to untrusted code, if it does (the outcome
    is then a failing placeholder until ``_refer`` runs it)."""
    mine = results[item.start : item.start + len(item.probes)]
    check = check_library.check_get(item.spec.name)
    judged = False
    referral = None
    if not item.probes:
        passed, message = False, messages.NO_PROBES
    elif len(mine) < len(item.probes) or any(r is None for r in mine):
        passed, message = False, MSG_CHECK_NOT_RUN.format(reason=reason)
    else:
        outcome = check.judge(item.params, item.probes, mine, spec.kind)
        judged = True
        if isinstance(outcome, Referral):
            passed, message, referral = False, MSG_CUSTOM_NOT_RUN, outcome
        else:
            passed, message = outcome.passed, outcome.message
    result = CheckResult(
        name=item.spec.name,
        label=item.label,
        passed=passed,
        message=message,
        weight=float(item.spec.weight),
        visibility=item.spec.visibility,
    )
    return result, judged, referral


def visible_message(*, check: Mapping[str, Any], deadline_passed: bool) -> str | None:
    """The message a student may see for a stored check result, or None if it is withheld."""
    visibility = check.get("visibility", VISIBILITY_SHOWN)
    if visibility == VISIBILITY_HIDDEN:
        return None
    if visibility == VISIBILITY_AFTER_DEADLINE and not deadline_passed:
        return None
    return str(check.get("message", ""))
