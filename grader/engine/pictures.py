"""The helpers each kind draws its pictures with, below the kinds: the pictures' seed and
captions (``PICTURES``), and the builders of the pictures' data (``example_dict``,
``saturation_sweep``). Pure: numpy only, no Django.

``grader.engine.plots`` asks the registry of kinds for a kind's pictures and wraps them in the
dict the result page reads (its format is there); nothing here asks the registry.
"""

# ruff: noqa: RUF001, RUF003 - the captions write − as math

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from grader.engine.executors.base import CallResult

# The pictures' own seed: fixed so a picture is the same on every regrade, and distinct from
# any grading seed (those come from the Submission row) so no hidden input is ever shown.
PLOT_SEED = 0x5EED_0F_9107

# Which picture shows each misconception (the grader's codes), and what to say under it.
PICTURES: dict[str, dict[str, str]] = {
    "missing-scale": {
        "picture": "saturation",
        "caption": "Without the division by √d_k your mean top weight climbs towards 1 as d_k "
        "grows: softmax picks one key and its gradient vanishes. The reference stays flat.",
    },
    "scale-by-d": {
        "picture": "row",
        "caption": "Dividing by d_k instead of √d_k shrinks the scores too much: at a large d_k "
        "your weights are nearly uniform, every key gets about the same share.",
    },
    "hardcoded-scale": {
        "picture": "saturation",
        "caption": "A constant divisor is right for one d_k only: your curve meets the "
        "reference there and drifts away from it at every other d_k.",
    },
    "wrong-dimension": {
        "picture": "saturation",
        "caption": "Dividing by the square root of the wrong size (not d_k) makes the spread of "
        "your weights depend on the wrong thing: compare your curve with the reference.",
    },
    "scale-by-model-width": {
        "picture": "saturation",
        "caption": "Each head should divide by √d_head; dividing by √d_model flattens every "
        "head's weights (your curve sits below the reference).",
    },
    "scale-values": {
        "picture": "example",
        "caption": "Scaling the values instead of the scores leaves softmax unscaled (sharper "
        "weights) and shrinks the output: your rows no longer sum to 1.",
    },
    "scale-after-softmax": {
        "picture": "example",
        "caption": "Dividing after the softmax leaves it unscaled and shrinks the weights: your "
        "rows sum to 1/√d_k instead of 1.",
    },
    "softmax-wrong-axis": {
        "picture": "example",
        "caption": "Softmax over the wrong axis normalises each key's column instead of each "
        "query's row: your rows do not sum to 1.",
    },
    "unnormalized-weights": {
        "picture": "example",
        "caption": "Your weights are not divided by their row sums: each query's weights should "
        "sum to 1.",
    },
    "backward-vanishing-hidden": {
        "picture": "vanishing",
        "caption": "The reference's largest gradient entry falls by more than thirty orders of "
        "magnitude as the scores grow; yours stops falling where it was clipped or floored.",
    },
    "backward-scale-dropped": {
        "picture": "vanishing",
        "caption": "Without the 1/√d_k of the chain rule your gradient into Q is √d_k times the "
        "reference's at every scale of the scores: your curve runs parallel, above it.",
    },
    "backward-diagonal-only": {
        "picture": "example",
        "caption": "Without the −p·pᵀ term your rows do not sum to 0: raising every score by "
        "the same amount would change the weights, which it never does.",
    },
    "backward-sign-flipped": {
        "picture": "example",
        "caption": "With the outer-product term added instead of subtracted your rows do not "
        "sum to 0, as a softmax's gradient always does.",
    },
    "unstable-softmax": {
        "picture": "stability",
        "caption": "exp of large scores overflows: subtract each row's maximum before exp (it "
        "changes nothing mathematically).",
    },
}


# ----------------------------------------------------------------------------------------
# Inputs


def plot_rng(stream: int) -> np.random.Generator:
    return np.random.default_rng([PLOT_SEED, stream])


def frozen(*arrays: np.ndarray) -> None:
    # Cached inputs are shared by every submission a worker grades: make them read-only.
    for a in arrays:
        a.flags.writeable = False


# ----------------------------------------------------------------------------------------
# Results


def num(x: float) -> float | None:
    x = float(x)
    return round(x, 4) if math.isfinite(x) else None


def _matrix(a: np.ndarray) -> list[list[float | None]]:
    return [[num(v) for v in row] for row in np.asarray(a, dtype=np.float64)]


def vector(a: np.ndarray) -> list[float | None]:
    return [num(v) for v in np.asarray(a, dtype=np.float64)]


def student_array(
    results: Sequence[CallResult], index: int, shape: tuple[int, ...]
) -> tuple[np.ndarray | None, str | None]:
    """The student's output of call ``index`` as float64 of ``shape``, or why not."""
    if index >= len(results):
        return None, "Your function did not get to this input (a limit was hit before)."
    result = results[index]
    if result.error is not None or result.output is None:
        first_line = (result.error or "no output").strip().splitlines()
        return None, f"Your function raised an error here: {first_line[-1] if first_line else ''}"
    try:
        out = np.asarray(result.output, dtype=np.float64)
    except (TypeError, ValueError):
        return None, "Your function returned something that is not an array of numbers."
    if out.shape != shape:
        return None, f"Your function returned shape {tuple(out.shape)}; expected {shape}."
    return out, None


def top_weight(weights: np.ndarray) -> float | None:
    """Mean over rows of the largest weight; None if any entry is not finite."""
    if not np.all(np.isfinite(weights)):
        return None
    return float(np.mean(np.max(weights, axis=-1)))


def labels(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i + 1}" for i in range(n)]


def example_dict(
    student: np.ndarray | None,
    reference: np.ndarray,
    error: str | None,
    *,
    title: str,
    note: str,
    rows: list[str],
    cols: list[str],
    d_k: int | None,
) -> dict[str, Any]:
    diff = None
    if student is not None and np.all(np.isfinite(student)):
        diff = num(np.max(np.abs(student - reference)))
    return {
        "title": title,
        "note": note,
        "rows": rows,
        "row_prefix": rows[0].rstrip("0123456789") if rows else "",
        "cols": cols,
        "d_k": d_k,
        "student": _matrix(student) if student is not None else None,
        "reference": _matrix(reference),
        "student_row_sums": vector(student.sum(axis=-1)) if student is not None else None,
        "reference_row_sums": vector(reference.sum(axis=-1)),
        "max_abs_diff": diff,
        "error": error,
    }


def saturation_sweep(
    results: Sequence[CallResult],
    *,
    label: str,
    sizes: Sequence[int],
    reference_of: Callable[[int], np.ndarray],
    shape_of: Callable[[int], tuple[int, ...]],
    weights_of: Callable[[np.ndarray, int], np.ndarray],
    queries: int,
    keys: int,
    col_prefix: str,
) -> dict[str, Any]:
    """Mean top weight against the scale's width (``label``), from calls 1, 2, ... of the
    pictures, each reference's first row of weights beside the student's at the largest."""
    ref_curve: list[float | None] = []
    stu_curve: list[float | None] = []
    errors: list[str] = []
    row_student: np.ndarray | None = None
    row_reference = np.zeros(keys)
    for i, size in enumerate(sizes):
        ref = reference_of(size)
        ref_curve.append(num(top_weight(ref) or 0.0))
        out, err = student_array(results, 1 + i, shape_of(size))
        weights = weights_of(out, size) if out is not None else None
        top = top_weight(weights) if weights is not None else None
        stu_curve.append(num(top) if top is not None else None)
        if err:
            errors.append(f"{label} = {size}: {err}")
        elif top is None:
            errors.append(f"{label} = {size}: your output has NaN or infinite entries.")
        if size == sizes[-1]:
            row_reference = ref.reshape(-1, keys)[0]
            row_student = weights.reshape(-1, keys)[0] if weights is not None else None
    return {
        "label": label,
        "d_k": list(sizes),
        "student": stu_curve,
        "reference": ref_curve,
        "uniform": num(1 / keys),
        "queries": queries,
        "keys": keys,
        "row": {
            "d_k": sizes[-1],
            "cols": labels(col_prefix, keys),
            "student": vector(row_student) if row_student is not None else None,
            "reference": vector(row_reference),
        },
        "error": "; ".join(errors) or None,
    }
