"""The instructor's own check: Python written in the admin that judges the student's outputs.

The instructor's code is not trusted either, so it never runs here. On the hidden inputs of
another check of the library (``inputs``, by default the kind's values check, freshly drawn
for this check), the student's outputs come from the student's one sandbox run, as for any
check; ``judge`` then hands grading a ``Referral``: a sandbox run of its own, after the
student's, with its own limits (``limits.CUSTOM_CHECK_LIMITS``), that calls

    check(student, expected, *inputs)

once per hidden input: the student's output, the reference's output, then the arguments the
student's function was called with. Only arrays and plain scalars cross the boundary, both
ways: the instructor's code never sees the student's code, the reference's code, the database
or the worker's environment. It returns True (or 1) when the output is acceptable and False
(or 0) when not; the student then reads the check's ``message`` (trusted text, authored in
the admin; ``{what}`` names the input). Anything else it does (raising, a limit, another
value) is the exercise's fault: the grade is an internal error, never charged, and Validate
shows the check as broken.

The web process only compiles the source (``compile``, ``ast``) to refuse a broken one on save.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from grader.engine import limits, messages, reference
from grader.engine.checks.base import (
    Check,
    CheckNotRun,
    Outcome,
    Param,
    ParamsError,
    Probe,
    Referral,
    output_problem,
    probe_expected,
    shape_problem,
)
from grader.engine.executors.base import Call, CallResult, RunRequest, RunResult, RunStatus
from grader.engine.kinds import kind_get

NAME = "custom"
# The function the instructor's source must define.
ENTRY_POINT = "check"

# Student-facing, when the instructor's check says no (the default of ``message``).
MSG_FAILED_DEFAULT = "On {what}, your output does not pass the instructor's check."
# Shown instead of the check's result when the instructor's code gave no verdict: the grade is
# an internal error, so the student is not charged.
MSG_NOT_RUN = "This check could not run: the exercise's own check is broken. You are not charged."

# For instructors, when saving the check (admin) and in Validate.
MSG_SOURCE_EMPTY = "source: write a Python function check(student, expected, *inputs)."
MSG_SOURCE_SYNTAX = "source: line {line}: {error}"
MSG_SOURCE_TOO_COMPLEX = "source: too deeply nested to compile."
MSG_SOURCE_NO_ENTRY = (
    "source: define a function at the top level named check that takes at least two "
    "arguments: check(student, expected, *inputs)."
)
MSG_INPUTS_UNKNOWN = "inputs: no check named “{name}” provides hidden inputs."
MSG_BROKEN_STOPPED = "The custom check's code did not finish: {status}. {message}"
MSG_BROKEN_RAISED = "On {what}, the custom check's code gave no answer:\n{error}"
MSG_BROKEN_RESULT = (
    "On {what}, the custom check's code returned {got}: it must return True (pass) or False (fail)."
)
MSG_BROKEN_MISSING = "The custom check's code answered {got} of {n} inputs."


def source_problems(source: str) -> list[str]:
    """Why the source cannot be a custom check, by compiling it only: nothing here runs it."""
    if not source.strip():
        return [MSG_SOURCE_EMPTY]
    try:
        compile(source, "<custom check>", "exec", dont_inherit=True)
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [MSG_SOURCE_SYNTAX.format(line=exc.lineno or 1, error=exc.msg)]
    except (RecursionError, MemoryError):
        return [MSG_SOURCE_TOO_COMPLEX]
    except ValueError as exc:  # null bytes
        return [MSG_SOURCE_SYNTAX.format(line=1, error=str(exc))]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == ENTRY_POINT:
            args = node.args
            if len(args.posonlyargs) + len(args.args) >= 2 or args.vararg is not None:
                return []
    return [MSG_SOURCE_NO_ENTRY]


def _library() -> Mapping[str, Check]:
    # Imported here: the library's registry imports this module.
    from grader.engine.checks import CHECKS

    return CHECKS


def _passed(output: np.ndarray | None) -> bool | None:
    """The instructor's answer on one input: True, False, or None if it is not one."""
    if not isinstance(output, np.ndarray) or output.size != 1 or output.dtype.kind not in "biuf":
        return None
    value = float(output.reshape(()))
    if value == 1.0:
        return True
    if value == 0.0:
        return False
    return None


def _got(result: CallResult) -> str:
    out = result.output
    if out is None:
        return "nothing"
    if out.size != 1:
        return f"an array of shape {tuple(int(s) for s in out.shape)}"
    return repr(out.reshape(()).item())[:40]


class Custom(Check):
    name = NAME
    label = "The instructor's own check"
    description = (
        "Python you write: `source` defines `check(student, expected, *inputs)`, called once per "
        "hidden input with the student's output, the reference's output and the arguments the "
        "student's function got (numpy arrays and scalars only). Return True to pass, False to "
        "fail; the student then reads `message` ({what} names the input). It runs in a sandbox "
        "of its own, with small fixed limits; if it raises or hits a limit, the grade is an "
        "internal error (never charged). `inputs`: the check whose kind of hidden inputs to "
        "use (empty: the values check of the kind)."
    )
    kinds = frozenset(reference.KINDS)
    params = (
        Param(
            "source",
            str,
            None,
            "Python defining check(student, expected, *inputs) -> True or False.",
            max_chars=limits.CUSTOM_CHECK_SOURCE_MAX_CHARS,
            required=True,
        ),
        Param(
            "message",
            str,
            MSG_FAILED_DEFAULT,
            "What a student reads when the check fails; {what} names the input.",
            max_chars=limits.CUSTOM_CHECK_MESSAGE_MAX_CHARS,
        ),
        Param("inputs", str, "", "The check whose hidden inputs to use (empty: the default)."),
    )

    def clean_params(self, raw: Mapping[str, Any] | None) -> dict[str, Any]:
        cleaned = super().clean_params(raw)
        errors = source_problems(cleaned["source"])
        inputs = cleaned["inputs"]
        if inputs and (inputs == NAME or inputs not in _library()):
            errors.append(MSG_INPUTS_UNKNOWN.format(name=inputs))
        if errors:
            raise ParamsError(errors)
        return cleaned

    def prepare(self, params, rng, kind) -> list[Probe]:
        name = params["inputs"] or kind_get(kind).values_check
        source = _library()[name]
        if kind not in source.kinds:
            raise ValueError(f"check {name!r} has no inputs for a {kind!r} exercise")
        return source.prepare(source.clean_params({}), rng, kind)

    def judge(self, params, probes, results, kind) -> Outcome | Referral:
        calls = []
        for probe, result in zip(probes, results, strict=True):
            # What the student's code got wrong by itself is said here, as by any check: the
            # instructor's code only ever sees a numeric array of the right shape.
            problem = output_problem(probe, result)
            if problem:
                return Outcome(False, problem)
            expected = probe_expected(kind, probe)
            problem = shape_problem(probe, result.output, expected.shape)
            if problem:
                return Outcome(False, problem)
            args = (result.output, expected, *probe.call.args)
            calls.append(Call(args=args, kwargs=dict(probe.call.kwargs)))
        request = RunRequest(
            code=params["source"],
            entry_point=ENTRY_POINT,
            calls=tuple(calls),
            limits=limits.CUSTOM_CHECK_LIMITS,
        )
        return Referral(request, partial(_conclude, params["message"], tuple(probes)))


def _conclude(message: str, probes: Sequence[Probe], run: RunResult) -> Outcome:
    """The outcome from the instructor's run: every answer must be a verdict, else the check is
    broken (even if an earlier input failed: a broken check is never half-trusted)."""
    if run.status != RunStatus.OK:
        raise CheckNotRun(MSG_BROKEN_STOPPED.format(status=run.status.value, message=run.message))
    if len(run.calls) != len(probes):
        raise CheckNotRun(MSG_BROKEN_MISSING.format(got=len(run.calls), n=len(probes)))
    answers = []
    for probe, result in zip(probes, run.calls, strict=True):
        if result.error is not None:
            raise CheckNotRun(MSG_BROKEN_RAISED.format(what=probe.what, error=result.error))
        passed = _passed(result.output)
        if passed is None:
            raise CheckNotRun(MSG_BROKEN_RESULT.format(what=probe.what, got=_got(result)))
        answers.append(passed)
    for probe, passed in zip(probes, answers, strict=True):
        if not passed:
            # Replaced, not str.format: the text is the instructor's, so no format fields of it
            # are ever evaluated.
            return Outcome(False, message.replace("{what}", probe.what))
    return Outcome(True, messages.PASSED)


__all__ = ["Custom", "source_problems"]
