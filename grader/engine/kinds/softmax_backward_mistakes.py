"""The known wrong implementations of the softmax's backward pass, as students write them.

Trusted code: OUR functions, each self-contained (``np`` and ``math`` only) so that
``WrongImplementation.source`` is a student-style module. Only their bodies live here; the
catalogue that names them, with its codes and tags, is ``kinds.softmax_backward``.
"""

from __future__ import annotations

import numpy as np

# --- one mistake each ---------------------------------------------------------------


def backward_diagonal_only(p, g):
    return g * p * (1 - p)  # the Jacobian's diagonal only: each score moves its own weight


def backward_sign_flipped(p, g):
    return p * (g + np.sum(g * p, axis=-1, keepdims=True))  # the outer-product term added


def backward_sum_axis_0(p, g):
    return p * (g - np.sum(g * p, axis=0, keepdims=True))  # down the columns


def backward_sum_axis_1(p, g):
    return p * (g - np.sum(g * p, axis=1, keepdims=True))  # the rows of a matrix, always


def backward_sum_whole(p, g):
    return p * (g - np.sum(g * p))  # one sum over every row at once


def backward_missing_keepdims(p, g):
    dot = np.sum(g * p, axis=-1)  # shape (..., ) broadcasts against the wrong axis
    return p * (g - dot)


def backward_jacobian_transposed(p, g):
    # One n x n Jacobian per row, J[..., i, j] = dp_i/ds_j; the gradient is J^T g.
    J = p[..., :, None] * (np.eye(p.shape[-1]) - p[..., None, :])
    return (J.T @ g[..., None])[..., 0]  # .T reverses the batch axes too


def backward_softmax_again(p, g):
    # p taken for the scores: exponentiated and normalised a second time.
    s = np.exp(p) / np.sum(np.exp(p), axis=-1, keepdims=True)
    return s * (g - np.sum(g * s, axis=-1, keepdims=True))


def backward_clips_p(p, g):
    p = np.clip(p, 1e-7, 1 - 1e-7)  # "to avoid numerical problems"
    return p * (g - np.sum(g * p, axis=-1, keepdims=True))


def backward_flushes_tiny(p, g):
    grad = p * (g - np.sum(g * p, axis=-1, keepdims=True))
    grad[np.abs(grad) < 1e-12] = 0.0  # tiny values treated as rounding noise
    return grad


def backward_two_dims_only(p, g):
    rows, cols = p.shape  # a matrix only
    dot = np.sum(g * p, axis=1).reshape(rows, 1)
    return (p * (g - dot)).reshape(rows, cols)


def backward_in_place(p, g):
    g -= np.sum(g * p, axis=-1, keepdims=True)  # right values, but the caller's g is changed
    g *= p
    return g


def backward_returns_jacobian(p, g):
    # The Jacobian itself, (..., n, n), not its product with g.
    return p[..., :, None] * (np.eye(p.shape[-1]) - p[..., None, :])


def backward_rounded(p, g):
    return np.round(p * (g - np.sum(g * p, axis=-1, keepdims=True)), 4)
