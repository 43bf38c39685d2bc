"""Sample ``Submission.plots`` dicts for tests, from trusted stand-ins for a student's function.

The stand-ins are OUR in-process functions written the way students get it wrong; no student
source is ever executed here. Each is called on ``grader.engine.plots.plot_calls(kind)`` exactly as
the sandbox would, and the outputs go through ``plots_from_results``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from grader.engine import reference
from grader.engine.executors.base import CallResult
from grader.engine.kinds.attention_backward_mistakes import (
    backward_clips_p as backward_clips_p_attention,
)
from grader.engine.kinds.attention_backward_mistakes import backward_scale_dropped
from grader.engine.kinds.demonstration_mistakes import demo_never_divides
from grader.engine.kinds.softmax_backward_mistakes import backward_clips_p, backward_diagonal_only
from grader.engine.plots import plot_calls, plots_from_results


def _softmax_rows(scores: np.ndarray) -> np.ndarray:
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _scores(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    return Q @ np.swapaxes(K, -1, -2)


def attention_correct(Q, K, V, mask=None):
    return reference.attention(Q, K, V, mask)


def attention_missing_scale(Q, K, V, mask=None):
    return _softmax_rows(_scores(Q, K)) @ V


def attention_scale_by_d(Q, K, V, mask=None):
    return _softmax_rows(_scores(Q, K) / Q.shape[-1]) @ V


def attention_divide_by_8(Q, K, V, mask=None):
    return _softmax_rows(_scores(Q, K) / 8.0) @ V


def attention_scale_after_softmax(Q, K, V, mask=None):
    return _softmax_rows(_scores(Q, K)) / np.sqrt(Q.shape[-1]) @ V


def attention_softmax_wrong_axis(Q, K, V, mask=None):
    s = _scores(Q, K) / np.sqrt(Q.shape[-1])
    e = np.exp(s - s.max(axis=-2, keepdims=True))
    return (e / e.sum(axis=-2, keepdims=True)) @ V


def attention_raises(Q, K, V, mask=None):
    raise ValueError("shapes not aligned")


def _mha(scale: Callable[[int, int], float]):
    def mha(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
        d_model = X.shape[-1]
        d_head = d_model // n_heads
        q, k, v = X @ W_q, X @ W_k, X @ W_v
        heads = []
        for h in range(n_heads):
            cols = slice(h * d_head, (h + 1) * d_head)
            s = q[..., cols] @ np.swapaxes(k[..., cols], -1, -2) / scale(d_head, d_model)
            heads.append(_softmax_rows(s) @ v[..., cols])
        return np.concatenate(heads, axis=-1) @ W_o

    return mha


def softmax_naive(x, axis=-1):
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)
        return e / e.sum(axis=axis, keepdims=True)


STUDENTS: dict[str, dict[str, Callable[..., Any]]] = {
    "attention": {
        "correct": attention_correct,
        "missing-scale": attention_missing_scale,
        "scale-by-d": attention_scale_by_d,
        "hardcoded-scale": attention_divide_by_8,
        "scale-after-softmax": attention_scale_after_softmax,
        "softmax-wrong-axis": attention_softmax_wrong_axis,
        "error": attention_raises,
    },
    "multi-head-attention": {
        "correct": lambda *a, **k: reference.multi_head_attention(*a, **k),
        "missing-scale": _mha(lambda dh, dm: 1.0),
        "scale-by-model-width": _mha(lambda dh, dm: float(np.sqrt(dm))),
    },
    "softmax": {
        "correct": lambda x, axis=-1: reference.softmax(x, axis),
        "unstable-softmax": softmax_naive,
    },
    "softmax_backward": {
        "correct": reference.softmax_backward,
        "backward-vanishing-hidden": backward_clips_p,
        "backward-diagonal-only": backward_diagonal_only,
    },
    "attention_backward": {
        "correct": reference.attention_backward,
        "backward-vanishing-hidden": backward_clips_p_attention,
        "backward-scale-dropped": backward_scale_dropped,
    },
    # A curve and no heatmap: the function returns four numbers, no weights.
    "demonstration": {
        "correct": reference.scaling_demonstration,
        "missing-scale": demo_never_divides,
    },
}


def run_student(kind: str, fn: Callable[..., Any]) -> list[CallResult]:
    """Call a trusted stand-in on the picture's inputs, as the sandbox would."""
    results = []
    for call in plot_calls(kind):
        args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in call.args)
        try:
            out = np.asarray(fn(*args, **call.kwargs))
            results.append(CallResult(output=out))
        except Exception as exc:
            results.append(CallResult(error=f"Traceback ...\n{type(exc).__name__}: {exc}"))
    return results


def sample_plots(kind: str, code: str) -> dict[str, Any]:
    """The plots dict of a submission of ``kind`` whose function shows misconception ``code``
    (or "correct", or "error" for a function that raises)."""
    results = run_student(kind, STUDENTS[kind][code])
    named = [] if code in ("correct", "error") else [code]
    plots = plots_from_results(kind, results, diagnosis=named)
    if named:
        plots["misconception"] = code  # what the worker adds
    return plots
