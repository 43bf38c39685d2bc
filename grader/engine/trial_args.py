"""A trial's inputs, below the kinds: the bounds of a custom input, the types of a case to run
(``ArgSpec``, ``TrialCase``) and the parsers each kind builds its custom input from. No Django
imports.

Each kind's module (``grader.engine.kinds``) parses the arguments of its entry point with these;
``grader.engine.trials`` reads the JSON object around them, runs the cases and compares the
outputs with the reference. Nothing here asks the registry of kinds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.engine.executors.base import Arg, Call

# Bounds of a custom input: small enough to read on the page and to cost nothing to run.
MAX_DIM = 16
MAX_NDIM = 4
MAX_ELEMENTS = 1024  # per argument, and for the expected output
# Outputs larger than this are shown by shape and difference only.
SHOWN_VALUES_MAX = 256
DECIMALS = 4

ROLE_ARRAY = "array"
ROLE_MASK = "mask"
ROLE_INT = "int"

CUSTOM = "custom"

# Student-facing messages (tests assert on them).
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
MSG_LAST_DIMS = "Q and K need the same last dimension d_k (Q has {q}, K has {k})."
MSG_KEY_ROWS = "K and V need the same number of rows m (K has {k}, V has {v})."
MSG_BATCH = "The batch dimensions {shapes} do not broadcast together."
MSG_MASK_SHAPE = "mask has shape {mask}; it must broadcast to {target}."
MSG_MASK_EMPTY_ROW = "mask: every query needs at least one allowed key (one row is all false)."
MSG_HEADS = "n_heads must divide d_model (d_model is {d_model}, n_heads is {n_heads})."
MSG_WEIGHT_SHAPE = "{name} must have shape ({d}, {d}), d_model by d_model (it has {shape})."
MSG_AXIS = "axis must be from {low} to {high} for an input with {ndim} dimensions."
MSG_NOT_PROBABILITIES = (
    "p must be a softmax output: non-negative, each row summing to 1 along the last axis "
    "(or give a shape, and p is the softmax of random scores)."
)
MSG_G_SHAPE = "g must have the shape of p (p has shape {p}, g has shape {g})."
MSG_BACKWARD_SHAPES = (
    "Q, K, V and dO must have one shape here, so the three gradients come back as one array "
    "(they have {shapes})."
)
MSG_OUTPUT_TOO_LARGE = f"The output would have {{n}} entries; at most {MAX_ELEMENTS} are allowed."


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

    def inputs_view(self) -> list[dict[str, Any]]:
        """Each argument as the page shows it: its name, shape and values."""
        view = []
        for label, arg in zip(self.labels, self.args, strict=True):
            if isinstance(arg, np.ndarray):
                view.append({"name": label, "shape": list(arg.shape), "values": _values(arg)})
            else:
                view.append({"name": label, "shape": None, "values": arg})
        return view


# --- Parsing one argument ----------------------------------------------------------------------


def int_value(name: str, value: Any, low: int, high: int, message: str = MSG_BAD_INT) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TrialInputError(message.format(name=name, low=low, high=high))
    return value


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


def array_arg(arg: ArgSpec, raw: Any, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    if isinstance(raw, dict):
        if set(raw) != {"shape"}:
            raise TrialInputError(MSG_BAD_ARRAY.format(name=arg.name))
        shape = _shape_value(arg.name, raw["shape"], arg.low, arg.high)
        # Two decimals: the student reads the very numbers their function was given.
        return np.round(rng.standard_normal(shape) * scale, 2)
    if isinstance(raw, list):
        return _array_from_values(arg.name, raw, arg.low, arg.high, boolean=False)
    raise TrialInputError(MSG_BAD_ARRAY.format(name=arg.name))


def mask_arg(raw: Any, n: int, m: int) -> np.ndarray:
    if raw == "causal":
        return np.tril(np.ones((n, m), dtype=bool))
    if isinstance(raw, list):
        return _array_from_values("mask", raw, 1, MAX_NDIM, boolean=True)
    raise TrialInputError(MSG_NOT_BOOLS)


# --- Checking the arguments together -----------------------------------------------------------


def broadcast_shapes(name_shapes: Sequence[tuple[str, tuple[int, ...]]]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*(s for _, s in name_shapes)))
    except ValueError:
        listed = ", ".join(f"{n} {shape_text(s)}" for n, s in name_shapes)
        raise TrialInputError(MSG_BATCH.format(shapes=listed)) from None


def check_mask(mask: np.ndarray, target: tuple[int, ...]) -> None:
    try:
        full = np.broadcast_to(mask, target)
    except ValueError:
        raise TrialInputError(
            MSG_MASK_SHAPE.format(mask=shape_text(mask.shape), target=shape_text(target))
        ) from None
    if not full.any(axis=-1).all():
        raise TrialInputError(MSG_MASK_EMPTY_ROW)


def check_output(shape: tuple[int, ...]) -> None:
    n = math.prod(shape)
    if n > MAX_ELEMENTS:
        raise TrialInputError(MSG_OUTPUT_TOO_LARGE.format(n=n))


def _about(args: Sequence[tuple[str, Arg]]) -> str:
    parts = []
    for name, value in args:
        parts.append(
            f"{name} {shape_text(value.shape)}"
            if isinstance(value, np.ndarray)
            else f"{name} {value}"
        )
    return "Your input: " + ", ".join(parts) + "."


def custom_case(named: Sequence[tuple[str, Arg]]) -> TrialCase:
    return TrialCase(
        CUSTOM,
        "Your input",
        _about(named),
        tuple(n for n, _ in named),
        tuple(a for _, a in named),
    )


# --- Showing arrays ----------------------------------------------------------------------------


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


def array_view(arr: np.ndarray) -> dict[str, Any]:
    return {"shape": list(arr.shape), "values": _values(arr)}
