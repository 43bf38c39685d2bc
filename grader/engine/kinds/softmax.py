"""A numerically stable softmax: ``softmax(x, axis=-1)``. No Django imports.

What is particular to this kind (see ``kinds.attention`` for the layout).
"""

# ruff: noqa: RUF001, RUF003 - the pictures' text uses ×, −, – and … on purpose

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from grader.engine import messages, pictures, reference
from grader.engine.executors.base import Arg, Call, CallResult
from grader.engine.inputs import WORKED_K, WORKED_Q, softmax_call, unit
from grader.engine.kinds import attention
from grader.engine.kinds.base import (
    BATCH,
    LARGE,
    PLAIN,
    DiagnosticProbe,
    Kind,
    WrongImplementation,
    catalogue_of,
    probe,
)
from grader.engine.kinds.softmax_mistakes import (
    softmax_columns_broadcast,
    softmax_fixed_axis_1,
    softmax_flattened,
    softmax_global_max,
    softmax_ignores_axis,
    softmax_math_exp,
    softmax_missing_keepdims,
    softmax_naive,
    softmax_rounded,
    softmax_shifts_in_place,
    softmax_tiled_rows,
    softmax_two_dims_only,
    softmax_unnormalized,
    softmax_whole_array,
)
from grader.engine.trial_args import (
    MAX_NDIM,
    MSG_AXIS,
    ROLE_ARRAY,
    ROLE_INT,
    ArgSpec,
    TrialCase,
    TrialInputError,
    array_arg,
    custom_case,
)

NAME = reference.KIND_SOFTMAX

REFERENCE_SOURCE = '''import numpy as np


def softmax(x, axis=-1):
    """Stable softmax: subtracting the max changes nothing mathematically and avoids overflow."""
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)
'''

_LARGE = frozenset({LARGE})
_BATCH = frozenset({BATCH})


_wrong = catalogue_of(NAME)


WRONG_IMPLEMENTATIONS: tuple[WrongImplementation, ...] = (
    _wrong("unstable-softmax", softmax_naive, _LARGE),
    _wrong("softmax-wrong-axis", softmax_ignores_axis),
    _wrong("softmax-wrong-axis", softmax_whole_array),
    _wrong("softmax-wrong-axis", softmax_missing_keepdims),
    _wrong("unnormalized-weights", softmax_unnormalized),
    _wrong("mutates-input", softmax_shifts_in_place),
    _wrong("wrong-shape", softmax_flattened),
    _wrong("softmax-wrong-axis", softmax_fixed_axis_1),
    _wrong("unstable-softmax", softmax_global_max, _LARGE),
    _wrong("unstable-softmax", softmax_math_exp, _LARGE),
    _wrong("rounded-output", softmax_rounded),
    _wrong("batch-fixed-ndim", softmax_two_dims_only, _BATCH),
    # Right in 1-D and 2-D; in 3-D a max or sum shaped for a matrix cannot broadcast.
    _wrong("batch-fixed-ndim", softmax_tiled_rows, _BATCH),
    _wrong("batch-fixed-ndim", softmax_columns_broadcast, _BATCH),
)


# --- diagnostic inputs -------------------------------------------------------------------------


def diagnostic_probes(rng: np.random.Generator) -> list[DiagnosticProbe]:
    """Inputs that tell the known misconceptions apart. The plain inputs have one, two and
    three dimensions (no batched copies: ``Kind.batch_copies`` is False)."""
    probes = [
        probe(softmax_call(unit(rng, shape) * 3.0, axis, return_inputs=True), PLAIN)
        for shape, axis in (((4, 6), None), ((3, 4, 5), 1), ((5, 5), None), ((4, 3), 0))
    ]
    offsets = np.array([[1e3], [-1e3], [2e3]])  # overflow, 0/0 and overflow in every row
    probes.append(probe(softmax_call(offsets + unit(rng, (3, 6)) * 2.0), LARGE))
    # 1-D inputs (the contract's smallest): code written for rows of a matrix fails here,
    # and list-based code written for one vector runs here only.
    probes.append(probe(softmax_call(unit(rng, (7,)) * 3.0, return_inputs=True), PLAIN))
    big = unit(rng, (6,)) * 2.0 + 1e3
    probes.append(probe(softmax_call(big), LARGE))
    return probes


def _trusted(func: object, x: np.ndarray, axis: int) -> np.ndarray | None:
    with np.errstate(all="ignore"):
        try:
            return np.array(func(x.copy(), axis), dtype=np.float64)  # type: ignore[operator]
        except Exception:
            return None


def other_axes(p: DiagnosticProbe) -> list[np.ndarray]:
    """The softmax of a plain probe's input along every other axis or set of axes (a loop over
    rows of a 3-D array normalises each 2-D slice; over no axis at all, every value is 1)."""
    args = p.call.args
    x = np.asarray(args[0], dtype=np.float64)
    axis = int(args[1]) if len(args) > 1 else -1
    subsets = [
        axes
        for r in range(x.ndim + 1)
        for axes in itertools.combinations(range(x.ndim), r)
        if axes != (axis % x.ndim,)
    ]
    others = [_softmax_over(x, axes) for axes in subsets]
    # The max taken along the axis but the sum over others (e / np.sum(e)).
    shifted = np.exp(x - x.max(axis=axis, keepdims=True))
    others += [shifted / shifted.sum(axis=axes, keepdims=True) for axes in subsets if axes]
    # A sum without keepdims, where it runs at all (one that raises matches no output).
    missing_keepdims = _trusted(softmax_missing_keepdims, x, axis)
    if missing_keepdims is not None:
        others.append(missing_keepdims)
    return others


def _softmax_over(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if not axes:
        return np.ones_like(x)
    e = np.exp(x - x.max(axis=axes, keepdims=True))
    return e / e.sum(axis=axes, keepdims=True)


# --- the common checks' inputs (checks.common) -------------------------------------------------

PARAMETERS = ("x", "axis")


def stability_call(rng: np.random.Generator, size: float, dtype: type) -> tuple[Call, str]:
    # Rows alternate between +size and -size offsets (the sign is part of what is tested:
    # exp overflows on one, underflows to 0/0 on the other).
    signs = np.where(np.arange(4) % 2 == 0, 1.0, -1.0)
    x = signs[:, None] * size + unit(rng, (4, 9)) * 2.0
    return softmax_call(x.astype(dtype)), f"inputs of magnitude about {size:g}"


def normalized_calls(rng: np.random.Generator) -> list[tuple[Call, str, int]]:
    return [
        (softmax_call(unit(rng, (6, 10)) * 3.0), "random x of shape (6, 10)", -1),
        (
            softmax_call(unit(rng, (4, 5, 6)) * 3.0, 1),
            "random x of shape (4, 5, 6) with axis=1",
            1,
        ),
    ]


def no_mutation_call(rng: np.random.Generator) -> tuple[Call, str]:
    call = softmax_call(unit(rng, (5, 7)) * 3.0, return_inputs=True)
    return call, "random x of shape (5, 7)"


# --- trials: the visible examples and a custom input ------------------------------------------

ARGUMENTS: tuple[ArgSpec, ...] = (
    ArgSpec("x", ROLE_ARRAY, "any shape", 1, 4),
    ArgSpec("axis", ROLE_INT, "optional: default -1", -MAX_NDIM, MAX_NDIM - 1, optional=True),
)


def _arg(name: str) -> ArgSpec:
    return next(a for a in ARGUMENTS if a.name == name)


# The worked example's scores after the division by sqrt(d_k) = 2 (the question page's step 2).
_WORKED_SCORES = (WORKED_Q @ WORKED_K.T) / 2.0


def visible_examples() -> list[TrialCase]:
    return [
        TrialCase(
            "worked-example",
            "The worked example's scaled scores",
            "The scores of the worked example after the division by sqrt(4) = 2; each row's "
            "softmax is the question page's step 3 (first row [0.506, 0.186, 0.307]).",
            ("x",),
            (_WORKED_SCORES.copy(),),
        ),
        TrialCase(
            "axis",
            "Along axis 0",
            "The same scores with axis = 0: each column sums to 1.",
            ("x", "axis"),
            (_WORKED_SCORES.copy(), 0),
        ),
        TrialCase(
            "batched",
            "Large scores, batched",
            "Two rows of scores near 1000: a naive exp overflows to inf and gives NaN.",
            ("x",),
            (np.array([[[1000.0, 1001.0, 1002.0]], [[-1000.0, 0.0, 1000.0]]]),),
        ),
    ]


def trial_case(spec: Mapping[str, Any], rng: np.random.Generator) -> TrialCase:
    x = array_arg(_arg("x"), spec["x"], rng)
    named: list[tuple[str, Arg]] = [("x", x)]
    if spec.get("axis") is not None:
        low, high = -x.ndim, x.ndim - 1
        if isinstance(spec["axis"], bool) or not isinstance(spec["axis"], int):
            raise TrialInputError(MSG_AXIS.format(low=low, high=high, ndim=x.ndim))
        if not low <= spec["axis"] <= high:
            raise TrialInputError(MSG_AXIS.format(low=low, high=high, ndim=x.ndim))
        named.append(("axis", int(spec["axis"])))
    return custom_case(named)


# --- pictures: the softmax of a score matrix, and of the same scores × SOFTMAX_BIG -------------

SOFTMAX_BIG = 1000.0  # the stability picture multiplies the example's scores by this

PICTURES = frozenset({"softmax-wrong-axis", "unnormalized-weights", "unstable-softmax"})


def _plot_example() -> np.ndarray:
    Q, K = attention.plot_example()
    return Q @ K.T / np.sqrt(attention.EXAMPLE_DK)


def plot_calls() -> tuple[Call, ...]:
    x = _plot_example()
    return (Call(args=(x,)), Call(args=(x * SOFTMAX_BIG,)))


def plots_of(results: Sequence[CallResult]) -> dict[str, Any]:
    x = _plot_example()
    shape = x.shape
    rows, cols = pictures.labels("row ", shape[0]), pictures.labels("", shape[1])
    student, error = pictures.student_array(results, 0, shape)
    example = pictures.example_dict(
        student,
        reference.softmax(x),
        error,
        title=f"softmax(x) of a {shape[0]} × {shape[1]} score matrix",
        note="Scores made for this picture (not a hidden input); each row should sum to 1.",
        rows=rows,
        cols=cols,
        d_k=None,
    )
    big_student, big_error = pictures.student_array(results, 1, shape)
    stability = pictures.example_dict(
        big_student,
        reference.softmax(x * SOFTMAX_BIG),
        big_error,
        title=f"The same scores × {SOFTMAX_BIG:g}",
        note="Large scores: exp overflows unless the row maximum is subtracted first. "
        "– marks NaN or infinity.",
        rows=rows,
        cols=cols,
        d_k=None,
    )
    return {"example": example, "saturation": None, "stability": stability}


KIND = Kind(
    name=NAME,
    reference=reference.softmax,
    reference_source=REFERENCE_SOURCE,
    wrong_implementations=WRONG_IMPLEMENTATIONS,
    diagnostic_probes=diagnostic_probes,
    arguments=ARGUMENTS,
    visible_examples=visible_examples,
    trial_case=trial_case,
    plot_calls=plot_calls,
    plots=plots_of,
    pictures=PICTURES,
    values_check="softmax-values",
    parameters=PARAMETERS,
    stability_call=stability_call,
    no_mutation_call=no_mutation_call,
    normalized_calls=normalized_calls,
    not_normalized=messages.SOFTMAX_NOT_NORMALIZED,
    batch_copies=False,
    other_axes=other_axes,
)
