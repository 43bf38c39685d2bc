"""Pictures of a student's own function for the result page of a submission.

Pure: numpy only, no Django. Two halves, used by the worker around one sandbox run:

* ``plot_calls(kind)`` builds the calls to run the student's function on: inputs generated for
  the pictures with a fixed seed of their own (never the hidden grading inputs), each called
  with V = identity (or its multi-head equivalent) so the output *is* the attention weights.
* ``plots_from_results(kind, results)`` turns the student's outputs into a JSON-serialisable
  dict (format below), next to the trusted reference computed here on the same inputs.

The dict (``version`` 1), read by ``templates/explorables/submission_plots.html``::

    {
      "version": 1, "kind": "attention",
      "example": {                       # heatmaps: student vs reference on a visible example
        "title": str, "note": str, "rows": ["q1", ...], "row_prefix": "q", "cols": ["k1", ...],
        "d_k": 16,
        "student": [[float|None]] | None, "reference": [[float]],
        "student_row_sums": [float|None] | None, "reference_row_sums": [float],
        "max_abs_diff": float | None, "error": str | None,
      },
      "saturation": {                    # mean top weight vs d_k (None for softmax)
        "d_k": [4, 8, ..., 512], "student": [float|None], "reference": [float],
        "uniform": 1/keys, "queries": int, "keys": int, "label": "d_k" | "d_head",
        "row": {"d_k": 512, "cols": [...], "student": [...] | None, "reference": [...]},
        "error": str | None,
      } | None,
      "stability": {...} | None,         # softmax only: the same heatmap pair at scores ×1000
      "pictures": {code: {"picture": "saturation"|"row"|"example"|"stability", "caption": str}},
      "diagnosis": [code, ...],          # the codes passed in, if any
      "misconception": code,             # set by the worker (first diagnosis code), optional
    }

Floats are rounded to 4 decimals; NaN and infinities become None (JSON has neither).
"""

# ruff: noqa: RUF001, RUF002, RUF003 - the pictures' text uses ×, −, – and … on purpose

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from grader.engine.executors.base import Call, CallResult
from grader.engine.reference import attention_weights, softmax

KIND_ATTENTION = "attention"
KIND_MULTI_HEAD = "multi-head-attention"
KIND_SOFTMAX = "softmax"

# The pictures' own seed: fixed so a picture is the same on every regrade, and distinct from
# any grading seed (those come from the Submission row) so no hidden input is ever shown.
PLOT_SEED = 0x5EED_0F_9107

EXAMPLE_QUERIES = 6
EXAMPLE_KEYS = 6
EXAMPLE_DK = 16
SWEEP_DK: tuple[int, ...] = (4, 8, 16, 32, 64, 128, 256, 512)
# 32 queries average the top weight well enough for a picture, and keep the sweep's inputs
# (d_k up to 512) to a quarter of what crosses the sandbox with 128: the pictures ride in
# every grade's run, so their size is paid by every submission.
SWEEP_QUERIES = 32
SWEEP_KEYS = 16

# Multi-head: 8 heads as in the grader's d_model = 512 check; the sweep stops at d_head = 64
# (d_model = 512) to keep the weight matrices that cross the sandbox small.
MH_HEADS = 8
MH_EXAMPLE_TOKENS = 6
MH_EXAMPLE_DHEAD = 8
MH_SWEEP_DHEAD: tuple[int, ...] = (8, 16, 32, 64)
MH_SWEEP_TOKENS = 8

SOFTMAX_BIG = 1000.0  # the stability picture multiplies the example's scores by this

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
    "unstable-softmax": {
        "picture": "stability",
        "caption": "exp of large scores overflows: subtract each row's maximum before exp (it "
        "changes nothing mathematically).",
    },
}

_PICTURES_BY_KIND: dict[str, frozenset[str]] = {
    KIND_ATTENTION: frozenset(PICTURES) - {"scale-by-model-width", "unstable-softmax"},
    KIND_MULTI_HEAD: frozenset(PICTURES) - {"unstable-softmax"},
    KIND_SOFTMAX: frozenset({"softmax-wrong-axis", "unnormalized-weights", "unstable-softmax"}),
}


def picture_for(code: str, kind: str = KIND_ATTENTION) -> dict[str, str] | None:
    """The picture that shows a misconception for this kind of exercise, if there is one."""
    if code in _PICTURES_BY_KIND.get(kind, frozenset()):
        return PICTURES[code]
    return None


# ----------------------------------------------------------------------------------------
# Inputs


def _rng(stream: int) -> np.random.Generator:
    return np.random.default_rng([PLOT_SEED, stream])


def _frozen(*arrays: np.ndarray) -> None:
    # Cached inputs are shared by every submission a worker grades: make them read-only.
    for a in arrays:
        a.flags.writeable = False


# The pictures' inputs are fixed, so each worker draws them (and computes their reference
# weights) once: drawing the sweep alone costs more than grading a correct submission.
@functools.cache
def _attention_example() -> tuple[np.ndarray, np.ndarray]:
    rng = _rng(1)
    Q = rng.standard_normal((EXAMPLE_QUERIES, EXAMPLE_DK))
    K = rng.standard_normal((EXAMPLE_KEYS, EXAMPLE_DK))
    _frozen(Q, K)
    return Q, K


@functools.cache
def _attention_sweep_draw() -> tuple[np.ndarray, np.ndarray]:
    rng = _rng(2)
    Q = rng.standard_normal((SWEEP_QUERIES, SWEEP_DK[-1]))
    K = rng.standard_normal((SWEEP_KEYS, SWEEP_DK[-1]))
    _frozen(Q, K)
    return Q, K


@functools.cache
def _attention_sweep(d_k: int) -> tuple[np.ndarray, np.ndarray]:
    """The first d_k columns of one draw: nested inputs make the curve smooth in d_k. Copied
    once into arrays of their own: a column slice would be copied again at every grade to
    cross into the sandbox."""
    Q, K = _attention_sweep_draw()
    Qd, Kd = np.ascontiguousarray(Q[:, :d_k]), np.ascontiguousarray(K[:, :d_k])
    _frozen(Qd, Kd)
    return Qd, Kd


@functools.cache
def _attention_sweep_reference(d_k: int) -> np.ndarray:
    ref = attention_weights(*_attention_sweep(d_k))
    _frozen(ref)
    return ref


@functools.cache
def _mh_inputs(
    stream: int, n_tokens: int, d_head: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """X, W_q, W_k, W_v, W_o such that the output's head-h block holds head h's weights.

    X's rows are the first ``n_tokens`` unit vectors, so X·W = the first rows of W: Q and K
    get unit-variance entries from W_q, W_k ~ N(0, 1). W_v makes every head's values the
    identity (padded with zero columns) and W_o = I, so columns h·d_head … h·d_head + n − 1
    of the output are head h's attention weights.
    """
    d_model = MH_HEADS * d_head
    rng = _rng(stream)
    X = np.eye(n_tokens, d_model)
    W_q = rng.standard_normal((d_model, d_model))
    W_k = rng.standard_normal((d_model, d_model))
    W_v = np.zeros((d_model, d_model))
    for h in range(MH_HEADS):
        W_v[np.arange(n_tokens), h * d_head + np.arange(n_tokens)] = 1.0
    W_o = np.eye(d_model)
    _frozen(X, W_q, W_k, W_v, W_o)
    return X, W_q, W_k, W_v, W_o


def _mh_reference_weights(
    X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, d_head: int
) -> np.ndarray:
    """(heads, n, n): each head's softmax(Q_h K_hᵀ / √d_head)."""
    Q, K = X @ W_q, X @ W_k
    return np.stack(
        [
            attention_weights(
                Q[:, h * d_head : (h + 1) * d_head], K[:, h * d_head : (h + 1) * d_head]
            )
            for h in range(MH_HEADS)
        ]
    )


def _mh_student_weights(output: np.ndarray, n_tokens: int, d_head: int) -> np.ndarray:
    """(heads, n, n) read back from the (n, d_model) output of the padded-identity call."""
    return np.stack([output[:, h * d_head : h * d_head + n_tokens] for h in range(MH_HEADS)])


def _softmax_example() -> np.ndarray:
    Q, K = _attention_example()
    return Q @ K.T / np.sqrt(EXAMPLE_DK)


def plot_calls(kind: str) -> list[Call]:
    """The calls to run the student's function on for the pictures, in a fixed order."""
    return list(_plot_calls(kind))


@functools.cache
def _plot_calls(kind: str) -> tuple[Call, ...]:
    if kind == KIND_ATTENTION:
        Q, K = _attention_example()
        calls = [Call(args=(Q, K, np.eye(EXAMPLE_KEYS)))]
        for d_k in SWEEP_DK:
            Qs, Ks = _attention_sweep(d_k)
            calls.append(Call(args=(Qs, Ks, np.eye(SWEEP_KEYS))))
        return tuple(calls)
    if kind == KIND_MULTI_HEAD:
        calls = [Call(args=(*_mh_inputs(1, MH_EXAMPLE_TOKENS, MH_EXAMPLE_DHEAD), MH_HEADS))]
        for d_head in MH_SWEEP_DHEAD:
            inputs = _mh_inputs(100 + d_head, MH_SWEEP_TOKENS, d_head)
            calls.append(Call(args=(*inputs, MH_HEADS)))
        return tuple(calls)
    if kind == KIND_SOFTMAX:
        x = _softmax_example()
        return (Call(args=(x,)), Call(args=(x * SOFTMAX_BIG,)))
    return ()


# ----------------------------------------------------------------------------------------
# Results


def _num(x: float) -> float | None:
    x = float(x)
    return round(x, 4) if math.isfinite(x) else None


def _matrix(a: np.ndarray) -> list[list[float | None]]:
    return [[_num(v) for v in row] for row in np.asarray(a, dtype=np.float64)]


def _vector(a: np.ndarray) -> list[float | None]:
    return [_num(v) for v in np.asarray(a, dtype=np.float64)]


def _student_array(
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


def _top_weight(weights: np.ndarray) -> float | None:
    """Mean over rows of the largest weight; None if any entry is not finite."""
    if not np.all(np.isfinite(weights)):
        return None
    return float(np.mean(np.max(weights, axis=-1)))


def _labels(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i + 1}" for i in range(n)]


def _example_dict(
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
        diff = _num(np.max(np.abs(student - reference)))
    return {
        "title": title,
        "note": note,
        "rows": rows,
        "row_prefix": rows[0].rstrip("0123456789") if rows else "",
        "cols": cols,
        "d_k": d_k,
        "student": _matrix(student) if student is not None else None,
        "reference": _matrix(reference),
        "student_row_sums": _vector(student.sum(axis=-1)) if student is not None else None,
        "reference_row_sums": _vector(reference.sum(axis=-1)),
        "max_abs_diff": diff,
        "error": error,
    }


@functools.cache
def _attention_example_reference() -> np.ndarray:
    ref = attention_weights(*_attention_example())
    _frozen(ref)
    return ref


def _attention_plots(results: Sequence[CallResult]) -> dict[str, Any]:
    reference = _attention_example_reference()
    student, error = _student_array(results, 0, (EXAMPLE_QUERIES, EXAMPLE_KEYS))
    example = _example_dict(
        student,
        reference,
        error,
        title=f"Attention weights: {EXAMPLE_QUERIES} queries × {EXAMPLE_KEYS} keys, d_k = "
        f"{EXAMPLE_DK}",
        note="Random unit-variance Q and K made for this picture (not a hidden input), called "
        "with V = identity so the output is the weights.",
        rows=_labels("q", EXAMPLE_QUERIES),
        cols=_labels("k", EXAMPLE_KEYS),
        d_k=EXAMPLE_DK,
    )
    ref_curve: list[float | None] = []
    stu_curve: list[float | None] = []
    errors: list[str] = []
    row_student: np.ndarray | None = None
    row_reference = np.zeros(SWEEP_KEYS)
    for i, d_k in enumerate(SWEEP_DK):
        ref = _attention_sweep_reference(d_k)
        ref_curve.append(_num(_top_weight(ref) or 0.0))
        out, err = _student_array(results, 1 + i, (SWEEP_QUERIES, SWEEP_KEYS))
        top = _top_weight(out) if out is not None else None
        stu_curve.append(_num(top) if top is not None else None)
        if err:
            errors.append(f"d_k = {d_k}: {err}")
        elif top is None:
            errors.append(f"d_k = {d_k}: your output has NaN or infinite entries.")
        if d_k == SWEEP_DK[-1]:
            row_reference = ref[0]
            row_student = out[0] if out is not None else None
    saturation = {
        "label": "d_k",
        "d_k": list(SWEEP_DK),
        "student": stu_curve,
        "reference": ref_curve,
        "uniform": _num(1 / SWEEP_KEYS),
        "queries": SWEEP_QUERIES,
        "keys": SWEEP_KEYS,
        "row": {
            "d_k": SWEEP_DK[-1],
            "cols": _labels("k", SWEEP_KEYS),
            "student": _vector(row_student) if row_student is not None else None,
            "reference": _vector(row_reference),
        },
        "error": "; ".join(errors) or None,
    }
    return {"example": example, "saturation": saturation}


def _multi_head_plots(results: Sequence[CallResult]) -> dict[str, Any]:
    n, d_head = MH_EXAMPLE_TOKENS, MH_EXAMPLE_DHEAD
    X, W_q, W_k, _, _ = _mh_inputs(1, n, d_head)
    reference = _mh_reference_weights(X, W_q, W_k, d_head)
    out, error = _student_array(results, 0, (n, MH_HEADS * d_head))
    student = _mh_student_weights(out, n, d_head)[0] if out is not None else None
    example = _example_dict(
        student,
        reference[0],
        error,
        title=f"Head 1 of {MH_HEADS}: attention weights of {n} tokens, d_head = {d_head} "
        f"(d_model = {MH_HEADS * d_head})",
        note="Inputs made for this picture (not a hidden input): one-hot tokens and random "
        "W_q, W_k; W_v and W_o chosen so the output holds each head's weights.",
        rows=_labels("t", n),
        cols=_labels("t", n),
        d_k=d_head,
    )
    ref_curve: list[float | None] = []
    stu_curve: list[float | None] = []
    errors: list[str] = []
    row_student: np.ndarray | None = None
    row_reference = np.zeros(MH_SWEEP_TOKENS)
    m = MH_SWEEP_TOKENS
    for i, dh in enumerate(MH_SWEEP_DHEAD):
        X, W_q, W_k, _, _ = _mh_inputs(100 + dh, m, dh)
        ref = _mh_reference_weights(X, W_q, W_k, dh)
        ref_curve.append(_num(_top_weight(ref) or 0.0))
        out, err = _student_array(results, 1 + i, (m, MH_HEADS * dh))
        weights = _mh_student_weights(out, m, dh) if out is not None else None
        top = _top_weight(weights) if weights is not None else None
        stu_curve.append(_num(top) if top is not None else None)
        if err:
            errors.append(f"d_head = {dh}: {err}")
        elif top is None:
            errors.append(f"d_head = {dh}: your output has NaN or infinite entries.")
        if dh == MH_SWEEP_DHEAD[-1]:
            row_reference = ref[0, 0]
            row_student = weights[0, 0] if weights is not None else None
    saturation = {
        "label": "d_head",
        "d_k": list(MH_SWEEP_DHEAD),
        "student": stu_curve,
        "reference": ref_curve,
        "uniform": _num(1 / m),
        "queries": m * MH_HEADS,
        "keys": m,
        "row": {
            "d_k": MH_SWEEP_DHEAD[-1],
            "cols": _labels("t", m),
            "student": _vector(row_student) if row_student is not None else None,
            "reference": _vector(row_reference),
        },
        "error": "; ".join(errors) or None,
    }
    return {"example": example, "saturation": saturation}


def _softmax_plots(results: Sequence[CallResult]) -> dict[str, Any]:
    x = _softmax_example()
    shape = x.shape
    rows, cols = _labels("row ", shape[0]), _labels("", shape[1])
    student, error = _student_array(results, 0, shape)
    example = _example_dict(
        student,
        softmax(x),
        error,
        title=f"softmax(x) of a {shape[0]} × {shape[1]} score matrix",
        note="Scores made for this picture (not a hidden input); each row should sum to 1.",
        rows=rows,
        cols=cols,
        d_k=None,
    )
    big_student, big_error = _student_array(results, 1, shape)
    stability = _example_dict(
        big_student,
        softmax(x * SOFTMAX_BIG),
        big_error,
        title=f"The same scores × {SOFTMAX_BIG:g}",
        note="Large scores: exp overflows unless the row maximum is subtracted first. "
        "– marks NaN or infinity.",
        rows=rows,
        cols=cols,
        d_k=None,
    )
    return {"example": example, "saturation": None, "stability": stability}


def plots_from_results(
    kind: str, results: Sequence[CallResult], diagnosis: Sequence[str] = ()
) -> dict[str, Any]:
    """The pictures' data from the student's results of ``plot_calls(kind)``, in order.

    ``results`` may be shorter than the calls (a limit ended the run part-way): the missing
    pictures say so. ``diagnosis``, the misconception codes the grader named, is optional.
    Returns {} for an unknown kind.
    """
    if kind == KIND_ATTENTION:
        body = _attention_plots(results)
    elif kind == KIND_MULTI_HEAD:
        body = _multi_head_plots(results)
    elif kind == KIND_SOFTMAX:
        body = _softmax_plots(results)
    else:
        return {}
    body.setdefault("stability", None)
    pictures = {code: dict(PICTURES[code]) for code in sorted(_PICTURES_BY_KIND[kind])}
    return {"version": 1, "kind": kind, **body, "pictures": pictures, "diagnosis": list(diagnosis)}
