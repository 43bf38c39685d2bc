"""The known wrong implementations of the softmax, as students write them.

Trusted code: OUR functions, each self-contained (``np`` and ``math`` only) so that
``WrongImplementation.source`` is a student-style module. Only their bodies live here; the
catalogue that names them, with its codes and tags, is ``kinds.softmax``.
"""

from __future__ import annotations

import math

import numpy as np

# --- one mistake each ---------------------------------------------------------------


def softmax_naive(x, axis=-1):
    e = np.exp(x)  # overflows to inf above ~709 (float64) or ~88 (float32)
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax_ignores_axis(x, axis=-1):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))  # always the last axis
    return e / np.sum(e, axis=-1, keepdims=True)


def softmax_whole_array(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)  # normalises over every element, not along the axis


def softmax_missing_keepdims(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis)  # the sum broadcasts along the wrong axis


def softmax_unnormalized(x, axis=-1):
    return np.exp(x - np.max(x, axis=axis, keepdims=True))  # never divided by the sum


def softmax_shifts_in_place(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)  # stable, but it changes the caller's array
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax_flattened(x, axis=-1):
    values = [math.exp(v - float(np.max(x))) for v in np.ravel(x)]
    total = sum(values)
    return np.array([v / total for v in values])  # loses the shape (and the axis)


def softmax_fixed_axis_1(x, axis=-1):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))  # the rows of a matrix, whatever axis says
    return e / np.sum(e, axis=1, keepdims=True)


def softmax_global_max(x, axis=-1):
    e = np.exp(x - np.max(x))  # one max for the whole array: far-below slices underflow to 0/0
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax_math_exp(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.array([math.exp(v) for v in x.ravel()]).reshape(x.shape)  # OverflowError above ~709
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax_rounded(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return np.round(e / np.sum(e, axis=axis, keepdims=True), 4)


def softmax_two_dims_only(x, axis=-1):
    rows, cols = x.shape  # a matrix only
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return (e / np.sum(e, axis=axis, keepdims=True)).reshape(rows, cols)


def softmax_tiled_rows(x, axis=-1):
    if x.ndim == 1:
        e = np.exp(x - np.max(x))
        return e / np.sum(e)
    columns = axis in (0, -2)
    if columns:
        x = x.T
    # Each row's max and sum repeated across its columns: the shape of a matrix only.
    e = np.exp(x - np.tile(np.max(x, axis=1), (x.shape[1], 1)).T)
    out = e / np.tile(np.sum(e, axis=1), (x.shape[1], 1)).T
    return out.T if columns else out


def softmax_columns_broadcast(x, axis=-1):
    x = np.array(x, dtype=float)
    flip = x.ndim > 1 and axis in (-1, x.ndim - 1)
    if flip:
        x, axis = x.T, 0  # a max without keepdims broadcasts down the columns of a matrix
    x -= np.max(x, axis=axis)  # and cannot broadcast along a middle axis of 3-D input
    e = np.exp(x)
    e /= np.sum(e, axis=axis)
    return e.T if flip else e
