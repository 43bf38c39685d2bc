"""The figures of the backward passes' misconceptions (the softmax's and attention's): each
number computed here from a fixed example, as engine.misconception_figures' are. No Django
imports."""

# ruff: noqa: RUF001, RUF003 - the figures write × and − as math

from __future__ import annotations

import math

import numpy as np

from grader.engine import reference
from grader.engine.figure_parts import GRID, ROW, Figure, numbers, softmax
from grader.engine.inputs import WORKED_K, WORKED_Q


def backward(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    return p * (g - np.sum(g * p, axis=-1, keepdims=True))


# Raising every score by the same amount changes no weight: with g = ones the gradient is 0.
_ONES = np.ones(3)


def backward_diagonal_only() -> Figure:
    p = softmax(ROW)
    return Figure(
        "p = softmax([1.0, 0.0, 0.5]) and g = [1, 1, 1] (every score raised alike).",
        (
            ("p", numbers(p)),
            ("p * (g − Σ g·p) (right)", numbers(np.abs(backward(p, _ONES)))),
            ("g * p * (1 − p), the diagonal only", numbers(_ONES * p * (1 - p))),
        ),
    )


def backward_sign_flipped() -> Figure:
    p = softmax(ROW)
    flipped = p * (_ONES + np.sum(_ONES * p))
    return Figure(
        "p = softmax([1.0, 0.0, 0.5]) and g = [1, 1, 1] (every score raised alike).",
        (
            ("p * (g − Σ g·p) (right)", numbers(np.abs(backward(p, _ONES)))),
            ("p * (g + Σ g·p)", numbers(flipped)),
            ("its sum (the right one sums to 0)", f"{flipped.sum():.3f}"),
        ),
    )


_BACKWARD_G = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


def backward_wrong_axis() -> Figure:
    p = softmax(GRID)
    columns = p * (_BACKWARD_G - np.sum(_BACKWARD_G * p, axis=0, keepdims=True))
    return Figure(
        "Two softmax rows, p = softmax([[1, 0, 0.5], [0, 1, 0.5]]), g picks key 1, then key 2.",
        (
            (
                "row sums of the gradient, Σ along axis=-1 (right)",
                numbers(np.abs(backward(p, _BACKWARD_G).sum(-1))),
            ),
            ("row sums, Σ along axis=0", numbers(columns.sum(-1))),
        ),
    )


def backward_jacobian_batch() -> Figure:
    p = softmax(GRID)
    J = p[..., :, None] * (np.eye(3) - p[..., None, :])
    try:
        J.T @ _BACKWARD_G[..., None]
        transposed = "runs"
    except ValueError as e:
        transposed = type(e).__name__  # (3, 3, 2) @ (2, 3, 1): the batch axes do not match
    symmetric = bool(np.allclose(J, np.swapaxes(J, -1, -2)))
    return Figure(
        "p of shape (2, 3): one Jacobian per row, stacked as J of shape (2, 3, 3).",
        (
            ("each row's J equals its transpose", "yes" if symmetric else "no"),
            ("J.T", str(J.T.shape)),
            ("J.T @ g[..., None]", transposed),
            (
                "np.einsum('...ij,...j->...i', J, g) (right)",
                str(np.einsum("...ij,...j->...i", J, _BACKWARD_G).shape),
            ),
        ),
    )


def backward_softmax_again() -> Figure:
    p = softmax(ROW)
    return Figure(
        "Scores [1.0, 0.0, 0.5]: their softmax p, and the softmax of p.",
        (
            ("p = softmax(scores)", numbers(p)),
            ("softmax(p)", numbers(softmax(p))),
        ),
    )


# The explainer's toy row ("The cat sat on the"): the two-decimal scores of its saturation
# figure, which round to the 0.8, 1.7, 0.5, 0.1, 0.2 it prints.
TOY_SCORES = np.array([0.75, 1.74, 0.5, 0.06, 0.16])


def largest_jacobian_entry(scale: float, clip: float = 0.0) -> float:
    p = softmax(TOY_SCORES * scale)
    if clip:
        p = np.clip(p, clip, 1 - clip)
    return float(np.max(np.abs(p[:, None] * (np.eye(p.size) - p[None, :]))))


def backward_vanishing_hidden() -> Figure:
    return Figure(
        "The explainer's toy row, scores [0.75, 1.74, 0.5, 0.06, 0.16] times a factor: the "
        "largest entry of the softmax's Jacobian.",
        (
            ("at ×1", f"{largest_jacobian_entry(1):.3f}"),
            ("at ×4", f"{largest_jacobian_entry(4):.3f}"),
            ("at ×10", f"{largest_jacobian_entry(10):.1e}"),
            ("at ×80", f"{largest_jacobian_entry(80):.1e}"),
            ("at ×80, p clipped to [1e-7, 1 − 1e-7]", f"{largest_jacobian_entry(80, 1e-7):.1e}"),
        ),
    )


# The attention backward's figures: the worked example's Q and K, V = K (every gradient is
# then (3, 4)) and dO picking the first output column, as the exercise's first visible example.
_WORKED_DO = np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))


def backward_scale_dropped() -> Figure:
    dQ = reference.attention_backward(WORKED_Q, WORKED_K, WORKED_K, _WORKED_DO)[0]
    return Figure(
        "The worked example (d_k = 4), V = K, dO = [1, 0, 0, 0] in every row: dQ[0].",
        (
            ("dQ[0] with the 1/√d_k", numbers(dQ[0])),
            ("dQ[0] without it", numbers(dQ[0] * math.sqrt(4))),
            ("ratio, every entry", f"{math.sqrt(4):g} = √4"),
        ),
    )


def backward_softmax_constant() -> Figure:
    p = softmax(ROW)
    dP = np.ones(3)  # the same upstream gradient for every key of the row
    dS = reference.softmax_backward(p, dP)
    return Figure(
        "Scores [1.0, 0.0, 0.5] and dP = [1, 1, 1]: raising every score of the row by the same "
        "amount changes no weight, so the true gradient into the scores is 0.",
        (
            ("dS = P * (dP - sum(dP * P)) (right)", numbers(np.abs(dS))),
            ("dS = dP (softmax as a constant)", numbers(dP)),
        ),
    )


def backward_transpose() -> Figure:
    p = softmax(np.zeros((2, 3)))  # 2 queries, 3 keys
    dO = np.ones((2, 4))
    try:
        untransposed = str((p @ dO).shape)
    except ValueError as e:
        untransposed = type(e).__name__  # (2, 3) @ (2, 4): the inner sizes differ
    return Figure(
        "Two queries and three keys (d_v = 4): V, and so dV, has shape (3, 4).",
        (
            ("Pᵀ @ dO (right)", str((p.T @ dO).shape)),
            ("P @ dO", untransposed),
        ),
    )


def backward_mask_leak() -> Figure:
    mask = np.tril(np.ones((3, 3), dtype=bool))
    dP = _WORKED_DO @ WORKED_K.T
    masked = reference.attention_weights(WORKED_Q, WORKED_K, mask)
    unmasked = reference.attention_weights(WORKED_Q, WORKED_K)
    leak = reference.softmax_backward(unmasked, dP)
    return Figure(
        "The worked example with a causal mask: the gradient into the three masked scores.",
        (
            (
                "from the forward's masked P (right)",
                numbers(np.abs(reference.softmax_backward(masked, dP)[~mask])),
            ),
            ("from P recomputed without the mask", numbers(leak[~mask])),
        ),
    )
