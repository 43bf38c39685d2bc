"""The shape of a check: build calls from (params, rng), judge the executor's results.

A check never runs student code. ``prepare`` generates inputs with trusted code; the grader
sends the calls to an executor (the sandbox) in one batch; ``judge`` compares the outputs that
came back with the trusted reference, here, outside the process that ran the student's code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from grader.engine import messages
from grader.engine.executors.base import Call, CallResult, RunRequest, RunResult
from grader.engine.kinds import reference_evaluate


class ParamsError(ValueError):
    """Parameters saved for a check do not fit its schema. ``errors`` lists what is wrong."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Param:
    """One parameter of a check, with its default and the values it may take."""

    name: str
    type: type  # int, float, bool, str or list
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    item_type: type | None = None  # for lists: the type of each item (int or float)
    # Lists of pairs (e.g. [d_model, n_heads]) give the length of each item.
    item_length: int | None = None
    max_items: int = 16
    # For text: the most characters it may hold.
    max_chars: int = 200
    # No default: the parameter must be given.
    required: bool = False

    def clean(self, value: Any) -> Any:
        if self.type is str:
            if not isinstance(value, str):
                raise ParamsError([f"{self.name}: a string is required"])
            if len(value) > self.max_chars:
                raise ParamsError([f"{self.name}: at most {self.max_chars} characters"])
            return value
        if self.type is list:
            if not isinstance(value, list) or not value:
                raise ParamsError([f"{self.name}: a non-empty list is required"])
            if len(value) > self.max_items:
                raise ParamsError([f"{self.name}: at most {self.max_items} items"])
            return [self._clean_item(v) for v in value]
        return self._clean_scalar(value, self.type)

    def _clean_item(self, value: Any) -> Any:
        if self.item_length is not None:
            if not isinstance(value, list) or len(value) != self.item_length:
                raise ParamsError([f"{self.name}: each item must be a list of {self.item_length}"])
            return [self._clean_scalar(v, self.item_type or int) for v in value]
        return self._clean_scalar(value, self.item_type or float)

    def _clean_scalar(self, value: Any, typ: type) -> Any:
        # bool is an int in Python; refuse it where a number is meant, and vice versa.
        if typ is bool:
            if not isinstance(value, bool):
                raise ParamsError([f"{self.name}: true or false is required"])
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ParamsError([f"{self.name}: a number is required"])
        if typ is int and (not float(value).is_integer()):
            raise ParamsError([f"{self.name}: a whole number is required"])
        cast = int(value) if typ is int else float(value)
        if self.minimum is not None and cast < self.minimum:
            raise ParamsError([f"{self.name}: must be at least {self.minimum:g}"])
        if self.maximum is not None and cast > self.maximum:
            raise ParamsError([f"{self.name}: must be at most {self.maximum:g}"])
        return cast


# A correct float64 backward pass agrees with the reference to about 1e-15 whatever its order of
# summation (vectorised, a Jacobian, einsum, loops); these leave room for that, and none for
# float32 or rounding.
RTOL64 = 1e-6
ATOL64 = 1e-9
RTOL64_PARAM = Param("rtol", float, RTOL64, "Relative tolerance against the reference.", 0.0, 0.1)
ATOL64_PARAM = Param("atol", float, ATOL64, "Absolute tolerance against the reference.", 0.0, 0.1)


@dataclass(frozen=True)
class Probe:
    """One call a check wants made, with a student-facing description of its input."""

    call: Call
    what: str
    # Free-form data the check needs to judge this call (never sent to the executor).
    info: Mapping[str, Any] = field(default_factory=dict)
    # The reference's output, once computed (see probe_expected).
    _expected: list[np.ndarray] = field(default_factory=list, compare=False, repr=False)


def probe_expected(kind: str, probe: Probe) -> np.ndarray:
    """The reference's output on the probe's input, computed once. The grader computes it
    while the sandbox runs the student's code, so judging finds it ready."""
    if not probe._expected:
        probe._expected.append(reference_evaluate(kind, probe.call.args, probe.call.kwargs))
    return probe._expected[0]


@dataclass(frozen=True)
class Outcome:
    passed: bool
    message: str


class CheckNotRun(RuntimeError):
    """A referred judgement could not be made (the instructor's code crashed, hit a limit or
    returned no verdict): the exercise's fault, never the student's. ``detail`` is for the
    instructor (Validate) and the log, never for students."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclass(frozen=True)
class Referral:
    """A judgement that trusted code cannot make itself: untrusted judging code (an instructor's
    custom check) to run in a sandbox run of its own, after the student's run has ended, and how
    its result becomes an ``Outcome`` (``conclude`` raises ``CheckNotRun`` if it is no verdict).
    """

    request: RunRequest
    conclude: Callable[[RunResult], Outcome]


class Check:
    """A named, parameterised check. Subclasses set the class attributes and two methods."""

    name: ClassVar[str]
    # What a student sees unless the instructor wrote a label: a str.format template over the
    # parameters, so the label names the sizes the check really ran with (see label_for).
    label_template: ClassVar[str] = ""
    description: ClassVar[str]  # for instructors, in the admin
    kinds: ClassVar[frozenset[str]]
    params: ClassVar[tuple[Param, ...]] = ()

    @property
    def label(self) -> str:
        """The label with the default parameters (the admin's list of checks)."""
        return self.label_for(self.clean_params(None))

    def label_for(self, params: Mapping[str, Any]) -> str:
        """The label of this check run with ``params`` (cleaned): the same values its inputs
        and messages come from."""
        own = getattr(type(self), "label", None)
        if isinstance(own, str):  # a check that states a fixed label as a plain attribute
            return own
        return self.label_template.format(**params) if self.label_template else self.name

    def clean_params(self, raw: Mapping[str, Any] | None) -> dict[str, Any]:
        """Defaults filled in, types and bounds checked, unknown keys refused."""
        if raw is not None and not isinstance(raw, Mapping):
            raise ParamsError(["parameters must be a JSON object"])
        raw = dict(raw or {})
        known = {p.name: p for p in self.params}
        errors = [f"{key}: unknown parameter" for key in raw if key not in known]
        cleaned: dict[str, Any] = {}
        for p in self.params:
            if p.required and p.name not in raw:
                errors.append(f"{p.name}: required")
                continue
            try:
                cleaned[p.name] = p.clean(raw[p.name]) if p.name in raw else p.default
            except ParamsError as exc:
                errors.extend(exc.errors)
        if errors:
            raise ParamsError(errors)
        return cleaned

    def params_schema(self) -> dict[str, Any]:
        """A JSON-schema-like description of the parameters (shown in the admin)."""
        return {
            p.name: {"type": p.type.__name__, "default": p.default, "help": p.help}
            for p in self.params
        }

    def prepare(
        self, params: Mapping[str, Any], rng: np.random.Generator, kind: str
    ) -> list[Probe]:
        raise NotImplementedError

    def judge(
        self,
        params: Mapping[str, Any],
        probes: Sequence[Probe],
        results: Sequence[CallResult],
        kind: str,
    ) -> Outcome | Referral:
        """The outcome, or a ``Referral`` for a judgement made by untrusted code (grading runs
        it through the executor once the student's run has ended)."""
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# Helpers shared by the checks: each returns a failure message, or None when the output is fine.


def output_problem(probe: Probe, result: CallResult | None, reason: str = "") -> str | None:
    """Did the call return a finite numeric array at all?"""
    if result is None:
        return messages.NOT_RUN.format(what=probe.what, reason=reason or messages.NOT_RUN_DEFAULT)
    if result.error is not None:
        return messages.CALL_ERROR.format(what=probe.what, error=readable_error(result.error))
    out = result.output
    if not isinstance(out, np.ndarray) or out.dtype.kind not in "biuf":
        got = type(out).__name__ if not isinstance(out, np.ndarray) else f"dtype {out.dtype}"
        return messages.NOT_NUMERIC.format(what=probe.what, got=got)
    return None


def shape_problem(probe: Probe, out: np.ndarray, expected_shape: tuple[int, ...]) -> str | None:
    if tuple(out.shape) != tuple(expected_shape):
        return messages.SHAPE.format(
            what=probe.what, expected=_shape(expected_shape), got=_shape(out.shape)
        )
    return None


def finite_problem(probe: Probe, out: np.ndarray) -> str | None:
    if not np.all(np.isfinite(out)):
        return messages.NOT_FINITE.format(what=probe.what)
    return None


def values_problem(
    probe: Probe, out: np.ndarray, expected: np.ndarray, *, rtol: float, atol: float
) -> str | None:
    out64 = out.astype(np.float64)
    if _all_close(out64, expected, rtol=rtol, atol=atol):
        return None
    diff = float(np.max(np.abs(out64 - expected)))
    decimals = rounded_to(out64, expected)
    if decimals is not None:
        return messages.ROUNDED.format(what=probe.what, decimals=decimals, diff=diff)
    return messages.VALUES.format(what=probe.what, diff=diff, rtol=rtol, atol=atol)


def _all_close(out: np.ndarray, expected: np.ndarray, *, rtol: float, atol: float) -> bool:
    """np.allclose, exactly, at a fifth of its cost in the common case: with every expected
    value finite, |out - expected| <= atol + rtol·|expected| everywhere is its whole answer (a
    NaN or infinite output fails that test, as it fails allclose). Otherwise allclose decides.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        fast = bool(np.all(np.abs(out - expected) <= atol + rtol * np.abs(expected)))
        if fast and bool(np.all(np.isfinite(expected))):
            return True
        return bool(np.allclose(out, expected, rtol=rtol, atol=atol))


# Rounded outputs: up to this many decimals, and enough values that a grid is no coincidence.
MAX_ROUNDED_DECIMALS = 6
ROUNDED_MIN_VALUES = 4


def rounded_to(out: np.ndarray, expected: np.ndarray) -> int | None:
    """d when ``out`` is ``expected`` rounded to d decimals (every value a multiple of 10^-d,
    within half a unit of it), for d <= 6; float arithmetic never lands on such a grid."""
    if out.shape != expected.shape or out.size < ROUNDED_MIN_VALUES:
        return None
    if not (np.all(np.isfinite(out)) and np.all(np.isfinite(expected))):
        return None
    if np.all(out == np.rint(out)):
        return None
    for d in range(1, MAX_ROUNDED_DECIMALS + 1):
        unit = 10.0**-d
        scaled = out / unit
        if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-6 * np.maximum(1.0, np.abs(scaled))):
            return d if np.all(np.abs(out - expected) <= 0.5 * unit * (1 + 1e-6)) else None
    return None


# Frames of a Python traceback as the sandbox sends it (student frames only).
_TB_HEADER = "Traceback (most recent call last):"
_TB_FRAME = re.compile(r'^  File "[^"]*", line (\d+), in (.+)$')
_TB_CHAINED = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)


def readable_error(text: str) -> str:
    """A traceback rewritten for a student: the exception line first, then the student's own
    lines where it was raised, innermost first. Other text (not a traceback) is unchanged."""
    try:
        return _readable_traceback(text)
    except Exception:  # the text is the student's: never let its shape break a verdict
        return text


def _readable_traceback(text: str) -> str:
    lines = text.strip("\n").splitlines()
    # A chained exception: the last part is the one that reached the caller.
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip() in _TB_CHAINED:
            lines = lines[i + 1 :]
            break
    while lines and not lines[0].strip():
        lines = lines[1:]
    if not lines or lines[0].strip() != _TB_HEADER:
        return text
    frames: list[tuple[str, str, str]] = []
    i, rest = 1, len(lines)
    while i < len(lines):
        match = _TB_FRAME.match(lines[i])
        if match is None:
            if lines[i].startswith("    "):  # ^^^ markers or a continuation line
                i += 1
                continue
            rest = i
            break
        code = ""
        if i + 1 < len(lines) and lines[i + 1].startswith("    "):
            code = lines[i + 1].strip()
            i += 1
        frames.append((match.group(1), match.group(2), code))
        i += 1
    else:
        rest = len(lines)
    exception = "\n".join(lines[rest:]).strip() or "an exception"
    out = [exception]
    for k, (line, func, code) in enumerate(reversed(frames)):
        template = messages.TRACEBACK_AT if k == 0 else messages.TRACEBACK_CALLED_FROM
        out.append(template.format(line=line, func=func, code=code).rstrip(": "))
    return "\n".join(out)


def compare_with_reference(
    kind: str,
    probe: Probe,
    result: CallResult | None,
    *,
    rtol: float,
    atol: float,
    reason: str = "",
) -> str | None:
    """The standard judgement: a finite numeric array of the reference's shape and values."""
    problem = output_problem(probe, result, reason)
    if problem is not None:
        return problem
    assert result is not None and result.output is not None
    expected = probe_expected(kind, probe)
    return (
        shape_problem(probe, result.output, expected.shape)
        or finite_problem(probe, result.output)
        or values_problem(probe, result.output, expected, rtol=rtol, atol=atol)
    )


def _shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def and_list(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c': values as a sentence names them."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def shape_text(shape: Sequence[int]) -> str:
    """A shape as students write it: (3, 4), or (5,) for one dimension."""
    return _shape(shape)


# float32 arithmetic inside a correct submission must pass; every known wrong implementation is
# off by far more (0.01 or worse) on these inputs.
RTOL = 1e-4
ATOL = 1e-5
RTOL_PARAM = Param("rtol", float, RTOL, "Relative tolerance against the reference.", 0.0, 0.1)
ATOL_PARAM = Param("atol", float, ATOL, "Absolute tolerance against the reference.", 0.0, 0.1)


def judge_against_reference(
    kind: str, probes: Sequence[Probe], results: Sequence[CallResult], params: Mapping[str, Any]
) -> Outcome:
    """Pass when every probe's output matches the reference within the check's rtol/atol."""
    for probe, result in zip(probes, results, strict=True):
        problem = compare_with_reference(
            kind, probe, result, rtol=params["rtol"], atol=params["atol"]
        )
        if problem:
            return Outcome(False, problem)
    return Outcome(True, messages.PASSED)
