"""Known wrong implementations, as students write them. Trusted code: OUR functions, not theirs.

Each function is self-contained (it uses only ``np`` and ``math``), so ``inspect.getsource``
gives a complete student-style module for the golden suite and the admin's Validate action
(``engine.misconceptions.WrongImplementation.source``). The diagnosis calls them in-process on
diagnostic inputs and compares their outputs with the student's outputs from the sandbox.
"""

from __future__ import annotations

import math

import numpy as np

# --- scaled dot-product attention ------------------------------------------------------------


def attention_missing_scale(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2)  # no division at all
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_scale_by_d(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / d_k  # d_k instead of sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_scale_values(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ (V / np.sqrt(d_k))  # the values are scaled, the scores are not


def attention_divide_by_8(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / 8.0  # sqrt(64): right for d_k = 64 only
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_divide_by_2(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / 2  # sqrt(4), copied from the worked example
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_divide_by_4(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / 4.0
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_divide_by_16(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / 16.0
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_sqrt_d_v(Q, K, V, mask=None):
    d = V.shape[-1]  # the value dimension, not the key dimension
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_sqrt_seq_len(Q, K, V, mask=None):
    d = K.shape[-2]  # the number of keys (sequence length)
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_sqrt_n_queries(Q, K, V, mask=None):
    d = Q.shape[-2]  # the number of queries
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_scale_after_softmax(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return (w / np.sqrt(d_k)) @ V  # divides the weights, after the softmax


def attention_softmax_over_queries(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-2, keepdims=True))
    return (w / w.sum(axis=-2, keepdims=True)) @ V  # normalises each column, not each row


def attention_naive_softmax(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores)  # overflows to inf for scores above ~709
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_unnormalized(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))  # never divided by the row sum
    return w @ V


def attention_mask_ignored(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)  # the mask is accepted and never used
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_mask_inverted(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)  # True taken as "blocked"
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_scales_q_in_place(Q, K, V, mask=None):
    Q /= np.sqrt(Q.shape[-1])  # right maths, but it changes the caller's array
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_returns_weights(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)  # the weights, not weights @ V


# --- multi-head attention ---------------------------------------------------------------------


def mha_missing_scale(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2)  # no scale
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_scale_by_d_head(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / d_head  # d_head instead of sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_scale_by_model_width(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_model)  # the model width, not the head's
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_divide_by_8(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / 8  # sqrt(64): right for d_head = 64 only
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_interleaved_heads(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        # (n, d_head, n_heads): head h gets every n_heads-th column, not a contiguous block
        return np.moveaxis(t.reshape(*lead, n, d_head, n_heads), -1, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_missing_output_projection(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model)  # W_o never applied


def mha_mask_ignored(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)  # mask never applied
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_naive_softmax(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores)  # no max subtracted: overflows on large scores
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_scales_weights_in_place(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads
    W_q /= np.sqrt(d_head)  # folds the scale into W_q, in the caller's array

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_returns_heads(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ v  # (..., n_heads, n, d_head): never merged


def mha_scale_values(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v) / np.sqrt(d_head)  # values scaled
    scores = q @ np.swapaxes(k, -1, -2)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_softmax_over_queries(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-2, keepdims=True))
    heads = (w / w.sum(axis=-2, keepdims=True)) @ v  # normalised over queries, not keys
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_unnormalized(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))  # never divided by the row sum
    heads = w @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


# --- softmax ----------------------------------------------------------------------------------


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
