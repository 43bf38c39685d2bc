"""Run before Submit: the student's function on the visible examples and on a small input of
their own, shown beside the trusted reference. No Django imports.

A trial never sees a hidden input or a check: its cases are the public examples of the kind's
module (``grader.engine.kinds``: the 3-token worked example of the question page, a masked case
and a batched case) and what the student typed, bounded tightly (``MAX_DIM``, ``MAX_ELEMENTS``).
Each kind parses its own custom input with the helpers below. The executor (the sandbox)
computes the student's outputs; the reference and the comparison run here, outside it.

A custom input is a JSON object, one entry per argument of the entry point:
- an array as its values (a nested list) or as ``{"shape": [...]}`` (random values from
  ``seed``, rounded to two decimals so the student can read them);
- a mask as a nested list of booleans, or ``"causal"``;
- an integer argument (``n_heads``, ``axis``) as a number;
- ``"seed"``: the seed of the random values (default 0).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from grader.engine import reference
from grader.engine.checks.base import readable_error
from grader.engine.executors.base import (
    Arg,
    Call,
    CallResult,
    Executor,
    Limits,
    RunRequest,
    RunStatus,
    run_whole,
)

if TYPE_CHECKING:
    from grader.engine.kinds import Kind

# Bounds of a custom input: small enough to read on the page and to cost nothing to run.
MAX_DIM = 16
MAX_NDIM = 4
MAX_ELEMENTS = 1024  # per argument, and for the expected output
MAX_SEED = 2**31 - 1
MAX_FIELD_CHARS = 20_000  # one typed field on the page
# Outputs larger than this are shown by shape and difference only.
SHOWN_VALUES_MAX = 256
DECIMALS = 4

# "Matches" means what the hidden value checks accept (grader.engine.checks.common).
RTOL = 1e-4
ATOL = 1e-5

ROLE_ARRAY = "array"
ROLE_MASK = "mask"
ROLE_INT = "int"

CUSTOM = "custom"

# Student-facing messages (tests assert on them).
MSG_NOT_AN_OBJECT = "The custom input must be a JSON object with one entry per argument."
MSG_UNKNOWN_ARGUMENT = "Unknown argument {name!r}: this function takes {names}."
MSG_MISSING_ARGUMENT = "{name} is missing: give its values (a nested list) or its shape."
MSG_BAD_ARRAY = "{name}: give a nested list of numbers, or a shape such as 3, 4."
MSG_BAD_SHAPE = "{name}: a shape is 1 to 4 positive whole numbers, such as 3, 4."
MSG_NDIM = "{name} must have {low} to {high} dimensions (it has {ndim})."
MSG_DIM_TOO_LARGE = f"{{name}}: every dimension must be at most {MAX_DIM} (the shape is {{shape}})."
MSG_TOO_MANY_VALUES = f"{{name}} has {{n}} entries; at most {MAX_ELEMENTS} are allowed."
MSG_NOT_NUMBERS = "{name}: the values must be a rectangular nested list of finite numbers."
MSG_NOT_BOOLS = (
    'mask: give a rectangular nested list of true/false (true = may attend), or "causal".'
)
MSG_BAD_INT = "{name} must be a whole number from {low} to {high}."
MSG_BAD_SEED = f"The seed must be a whole number from 0 to {MAX_SEED}."
MSG_FIELD_TOO_LONG = f"{{name}}: at most {MAX_FIELD_CHARS} characters."
MSG_BAD_JSON = "{name}: this is not valid JSON ({error})."
MSG_LAST_DIMS = "Q and K need the same last dimension d_k (Q has {q}, K has {k})."
MSG_KEY_ROWS = "K and V need the same number of rows m (K has {k}, V has {v})."
MSG_BATCH = "The batch dimensions {shapes} do not broadcast together."
MSG_MASK_SHAPE = "mask has shape {mask}; it must broadcast to {target}."
MSG_MASK_EMPTY_ROW = "mask: every query needs at least one allowed key (one row is all false)."
MSG_HEADS = "n_heads must divide d_model (d_model is {d_model}, n_heads is {n_heads})."
MSG_WEIGHT_SHAPE = "{name} must have shape ({d}, {d}), d_model by d_model (it has {shape})."
MSG_AXIS = "axis must be from {low} to {high} for an input with {ndim} dimensions."
MSG_OUTPUT_TOO_LARGE = f"The output would have {{n}} entries; at most {MAX_ELEMENTS} are allowed."
MSG_NO_TRIALS = "This exercise has no visible examples to run."

# Per case, when the student's call did not give a comparable output.
MSG_NOT_RUN = "Not run: {reason}"
MSG_NOT_RUN_DEFAULT = "the run stopped before this example."
MSG_NOT_NUMERIC = "Your function returned {got}, not a numeric array."
MSG_SHAPE = "Your output has shape {got}; the expected shape is {expected}."
MSG_NOT_FINITE = "Your output holds NaN or infinity."
MSG_INTERNAL = "The runner had an internal problem; this is not your fault. Please run again."

# The report's overall status.
STATUS_OK = "ok"  # the module loaded; each case has its outcome
STATUS_ERROR = "error"  # the code could not be run at all (syntax error, no entry point, ...)
STATUS_INTERNAL = "internal"  # ours


class TrialInputError(ValueError):
    """A custom input that cannot be run; ``message`` is for the student."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ArgSpec:
    """One argument of an entry point as a custom input gives it."""

    name: str
    role: str
    help: str
    low: int = 1  # dimensions of an array, or the smallest integer
    high: int = MAX_NDIM
    optional: bool = False


@dataclass(frozen=True)
class TrialCase:
    """One call shown on the page: its inputs are public, never a hidden check's."""

    name: str  # a stable id: "worked-example", "masked", "batched", "custom"
    title: str
    about: str
    labels: tuple[str, ...]  # each argument's name, for the page
    args: tuple[Arg, ...]

    @property
    def call(self) -> Call:
        # Positional, as the checks call: the contract fixes the order, not the names.
        return Call(args=self.args)

    def expected(self, kind: str) -> np.ndarray:
        return reference.evaluate(kind, self.args)

    def inputs_view(self) -> list[dict[str, Any]]:
        """Each argument as the page shows it: its name, shape and values."""
        view = []
        for label, arg in zip(self.labels, self.args, strict=True):
            if isinstance(arg, np.ndarray):
                view.append({"name": label, "shape": list(arg.shape), "values": _values(arg)})
            else:
                view.append({"name": label, "shape": None, "values": arg})
        return view


# --- The visible examples --------------------------------------------------------------------


def _kind(kind: str) -> Kind | None:
    # Imported here: each kind builds its examples and custom inputs from this module's types.
    from grader.engine.kinds import KINDS

    return KINDS.get(kind)


def visible_examples(kind: str) -> list[TrialCase]:
    """The public examples of an exercise kind (fresh arrays on each call)."""
    found = _kind(kind)
    return found.visible_examples() if found else []


def visible_examples_view(kind: str) -> list[dict[str, Any]]:
    """The examples as the statement shows them: inputs and the reference's output."""
    return [
        {
            "name": case.name,
            "title": case.title,
            "about": case.about,
            "inputs": case.inputs_view(),
            "expected": _array_view(case.expected(kind)),
        }
        for case in visible_examples(kind)
    ]


# --- A custom input ----------------------------------------------------------------------------


def arguments_of(kind: str) -> tuple[ArgSpec, ...]:
    found = _kind(kind)
    return found.arguments if found else ()


def trial_spec_from_fields(kind: str, fields: Mapping[str, str]) -> dict[str, Any] | None:
    """The custom input as typed on the page (one text per argument, and the seed), as the
    JSON object the API takes; None when every field is blank (run the examples only).

    A text starting with ``[`` is JSON values; ``causal`` is a causal mask; anything else in
    an array field is a shape (``3, 4``, ``3x4`` or ``(3, 4)``).
    """
    spec: dict[str, Any] = {}
    for arg in arguments_of(kind):
        text = (fields.get(arg.name) or "").strip()
        if not text:
            continue
        if len(text) > MAX_FIELD_CHARS:
            raise TrialInputError(MSG_FIELD_TOO_LONG.format(name=arg.name))
        if arg.role == ROLE_INT:
            spec[arg.name] = _int_text(arg.name, text, arg.low, arg.high)
        elif text.startswith("["):
            try:
                spec[arg.name] = json.loads(text)
            except (ValueError, RecursionError) as exc:
                raise TrialInputError(
                    MSG_BAD_JSON.format(name=arg.name, error=str(exc)[:80])
                ) from None
        elif arg.role == ROLE_MASK and text.lower() == "causal":
            spec[arg.name] = "causal"
        else:
            spec[arg.name] = {"shape": _shape_text(arg.name, text)}
    if not spec:
        return None
    seed_text = (fields.get("seed") or "").strip()
    if seed_text:
        spec["seed"] = _int_text("seed", seed_text, 0, MAX_SEED, MSG_BAD_SEED)
    return spec


def _int_text(name: str, text: str, low: int, high: int, message: str = MSG_BAD_INT) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise TrialInputError(message.format(name=name, low=low, high=high)) from None
    return _int_value(name, value, low, high, message)


def _int_value(name: str, value: Any, low: int, high: int, message: str = MSG_BAD_INT) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TrialInputError(message.format(name=name, low=low, high=high))
    return value


def _shape_text(name: str, text: str) -> list[int]:
    parts = text.strip("()[] ").replace("x", ",").replace("\u00d7", ",").split(",")
    parts = [p.strip() for p in parts]
    if parts and parts[-1] == "":  # "(3,)"
        parts = parts[:-1]
    if not parts or not all(p.isascii() and p.isdigit() and len(p) < 6 for p in parts):
        raise TrialInputError(MSG_BAD_SHAPE.format(name=name))
    return [int(p) for p in parts]


def _shape_value(name: str, shape: Any, low: int, high: int) -> tuple[int, ...]:
    if not isinstance(shape, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) for d in shape
    ):
        raise TrialInputError(MSG_BAD_SHAPE.format(name=name))
    if not low <= len(shape) <= high:
        raise TrialInputError(MSG_NDIM.format(name=name, low=low, high=high, ndim=len(shape)))
    if any(d < 1 for d in shape):
        raise TrialInputError(MSG_BAD_SHAPE.format(name=name))
    _check_size(name, tuple(shape))
    return tuple(shape)


def _check_size(name: str, shape: tuple[int, ...]) -> None:
    if any(d > MAX_DIM for d in shape):
        raise TrialInputError(MSG_DIM_TOO_LARGE.format(name=name, shape=shape_text(shape)))
    n = math.prod(shape)
    if n > MAX_ELEMENTS:
        raise TrialInputError(MSG_TOO_MANY_VALUES.format(name=name, n=n))


def _array_from_values(name: str, values: Any, low: int, high: int, *, boolean: bool) -> np.ndarray:
    bad = MSG_NOT_BOOLS if boolean else MSG_NOT_NUMBERS.format(name=name)
    try:
        arr = np.array(values)
    except (ValueError, TypeError, OverflowError, RecursionError):
        raise TrialInputError(bad) from None
    if arr.ndim == 0 or arr.size == 0:
        raise TrialInputError(bad)
    if not low <= arr.ndim <= high:
        raise TrialInputError(MSG_NDIM.format(name=name, low=low, high=high, ndim=arr.ndim))
    _check_size(name, arr.shape)
    if boolean:
        if arr.dtype.kind == "b":
            return arr
        if arr.dtype.kind in "iu" and np.isin(arr, (0, 1)).all():
            return arr.astype(bool)
        raise TrialInputError(bad)
    if arr.dtype.kind not in "iuf":
        raise TrialInputError(bad)
    try:
        arr = arr.astype(np.float64)
    except OverflowError:
        raise TrialInputError(bad) from None
    if not np.isfinite(arr).all():
        raise TrialInputError(bad)
    return arr


def _array_arg(arg: ArgSpec, raw: Any, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    if isinstance(raw, dict):
        if set(raw) != {"shape"}:
            raise TrialInputError(MSG_BAD_ARRAY.format(name=arg.name))
        shape = _shape_value(arg.name, raw["shape"], arg.low, arg.high)
        # Two decimals: the student reads the very numbers their function was given.
        return np.round(rng.standard_normal(shape) * scale, 2)
    if isinstance(raw, list):
        return _array_from_values(arg.name, raw, arg.low, arg.high, boolean=False)
    raise TrialInputError(MSG_BAD_ARRAY.format(name=arg.name))


def _mask_arg(raw: Any, n: int, m: int) -> np.ndarray:
    if raw == "causal":
        return np.tril(np.ones((n, m), dtype=bool))
    if isinstance(raw, list):
        return _array_from_values("mask", raw, 1, MAX_NDIM, boolean=True)
    raise TrialInputError(MSG_NOT_BOOLS)


def _broadcast(name_shapes: Sequence[tuple[str, tuple[int, ...]]]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*(s for _, s in name_shapes)))
    except ValueError:
        listed = ", ".join(f"{n} {shape_text(s)}" for n, s in name_shapes)
        raise TrialInputError(MSG_BATCH.format(shapes=listed)) from None


def _check_mask(mask: np.ndarray, target: tuple[int, ...]) -> None:
    try:
        full = np.broadcast_to(mask, target)
    except ValueError:
        raise TrialInputError(
            MSG_MASK_SHAPE.format(mask=shape_text(mask.shape), target=shape_text(target))
        ) from None
    if not full.any(axis=-1).all():
        raise TrialInputError(MSG_MASK_EMPTY_ROW)


def _check_output(shape: tuple[int, ...]) -> None:
    n = math.prod(shape)
    if n > MAX_ELEMENTS:
        raise TrialInputError(MSG_OUTPUT_TOO_LARGE.format(n=n))


def trial_input_case(kind: str, spec: Any) -> TrialCase:
    """The custom input as a case to run, or TrialInputError saying what is wrong with it.

    Pure and seeded: the web process checks a request with it, the worker rebuilds the same
    arrays from the stored spec.
    """
    args_of = arguments_of(kind)
    if not args_of:
        raise TrialInputError(MSG_NO_TRIALS)
    if not isinstance(spec, dict):
        raise TrialInputError(MSG_NOT_AN_OBJECT)
    names = [a.name for a in args_of]
    for key in spec:
        if key != "seed" and key not in names:
            raise TrialInputError(
                MSG_UNKNOWN_ARGUMENT.format(name=str(key)[:40], names=", ".join(names))
            )
    seed = _int_value("seed", spec.get("seed", 0), 0, MAX_SEED, MSG_BAD_SEED)
    for arg in args_of:
        if not arg.optional and spec.get(arg.name) is None:
            raise TrialInputError(MSG_MISSING_ARGUMENT.format(name=arg.name))
    rng = np.random.default_rng(seed)
    return _kind(kind).trial_case(spec, rng)  # type: ignore[union-attr]  # args_of: known


def _about(args: Sequence[tuple[str, Arg]]) -> str:
    parts = []
    for name, value in args:
        parts.append(
            f"{name} {shape_text(value.shape)}"
            if isinstance(value, np.ndarray)
            else f"{name} {value}"
        )
    return "Your input: " + ", ".join(parts) + "."


def _custom_case(named: Sequence[tuple[str, Arg]]) -> TrialCase:
    return TrialCase(
        CUSTOM,
        "Your input",
        _about(named),
        tuple(n for n, _ in named),
        tuple(a for _, a in named),
    )


def trial_cases(kind: str, spec: Any | None) -> list[TrialCase]:
    """What a trial runs: the visible examples, then the custom input if there is one."""
    cases = visible_examples(kind)
    if spec is not None:
        cases.append(trial_input_case(kind, spec))
    return cases


# --- Running and comparing ---------------------------------------------------------------------


def shape_text(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _plain(value: Any) -> Any:
    """JSON-safe: NaN and infinities become strings ("nan", "inf"), which JSON cannot hold."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _values(arr: np.ndarray) -> Any:
    if arr.size > SHOWN_VALUES_MAX:
        return None
    if arr.dtype.kind == "b":
        return arr.tolist()
    return _plain(np.round(arr.astype(np.float64), DECIMALS).tolist())


def _array_view(arr: np.ndarray) -> dict[str, Any]:
    return {"shape": list(arr.shape), "values": _values(arr)}


def trial_compare(kind: str, case: TrialCase, result: CallResult | None, reason: str) -> dict:
    """One case's row: the student's output beside the reference's, and whether they match."""
    expected = case.expected(kind)
    row: dict[str, Any] = {
        "name": case.name,
        "title": case.title,
        "about": case.about,
        "inputs": [{"name": i["name"], "shape": i["shape"]} for i in case.inputs_view()],
        "expected": _array_view(expected),
        "output": None,
        "match": False,
        "max_abs_diff": None,
        "error": None,
    }
    if result is None:
        row["error"] = MSG_NOT_RUN.format(reason=reason or MSG_NOT_RUN_DEFAULT)
        return row
    if result.error is not None:
        row["error"] = readable_error(result.error)
        return row
    out = result.output
    if not isinstance(out, np.ndarray) or out.dtype.kind not in "biuf":
        got = f"dtype {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        row["error"] = MSG_NOT_NUMERIC.format(got=got)
        return row
    row["output"] = _array_view(out)
    if tuple(out.shape) != tuple(expected.shape):
        row["error"] = MSG_SHAPE.format(
            got=shape_text(out.shape), expected=shape_text(expected.shape)
        )
        return row
    out = out.astype(np.float64)
    if not np.isfinite(out).all():
        row["error"] = MSG_NOT_FINITE
        return row
    diff = float(np.max(np.abs(out - expected))) if out.size else 0.0
    row["max_abs_diff"] = diff
    row["match"] = bool(np.allclose(out, expected, rtol=RTOL, atol=ATOL))
    return row


def trial_execute(
    *,
    kind: str,
    entry_point: str,
    code: str,
    cases: Sequence[TrialCase],
    limits: Limits,
    executor: Executor,
) -> dict[str, Any]:
    """Run ``code`` once through ``executor`` on every case and compare each output with the
    reference, here. The report in plain JSON types, as ``TrialRun.result`` stores it."""
    if not cases:
        return {"status": STATUS_ERROR, "message": MSG_NO_TRIALS, "stdout": "", "cases": []}
    request = RunRequest(code, entry_point, tuple(c.call for c in cases), limits)
    run = run_whole(executor, request)
    if run.status == RunStatus.INTERNAL:
        return {"status": STATUS_INTERNAL, "message": MSG_INTERNAL, "stdout": "", "cases": []}
    if run.status != RunStatus.OK and not run.calls:
        # Nothing ran: a syntax error, no entry point, a crash at import, a limit at once.
        return {"status": STATUS_ERROR, "message": run.message, "stdout": run.stdout, "cases": []}
    results: list[CallResult | None] = list(run.calls)[: len(cases)]
    results += [None] * (len(cases) - len(results))
    return {
        "status": STATUS_OK,
        "message": run.message if run.status != RunStatus.OK else "",
        "stdout": run.stdout,
        "cases": [
            trial_compare(kind, case, result, run.message)
            for case, result in zip(cases, results, strict=True)
        ],
    }
