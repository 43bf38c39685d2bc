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


def attention_global_max(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - np.max(scores))  # one max for the whole array: low rows underflow to 0/0
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_mask_zero_fill(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = scores * mask  # a masked score becomes 0, which still gets weight
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_mask_nan_fill(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, np.nan)  # NaN spreads to the whole row
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_rounded(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return np.round((w / w.sum(axis=-1, keepdims=True)) @ V, 4)  # rounded for printing


def attention_matmul_dot_t(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)  # .T reverses the batch axes too: right for 2-D only
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_np_dot_t(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.dot(Q, K.T) / np.sqrt(d_k)  # the 2-D textbook formula
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return np.dot(w / w.sum(axis=-1, keepdims=True), V)


def attention_np_dot_values(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return np.dot(w / w.sum(axis=-1, keepdims=True), V)  # np.dot pairs every batch with every one


def attention_transpose_3d(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k)  # exactly three dimensions
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_d_k_from_shape_1(Q, K, V, mask=None):
    d_k = K.shape[1]  # the key dimension in 2-D only: with a batch axis it is m
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_softmax_axis_1(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))  # axis 1 is the keys in 2-D only
    return (w / w.sum(axis=1, keepdims=True)) @ V


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


def mha_mask_inverted(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
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
        scores = np.where(m[..., None, :, :], -np.inf, scores)  # True taken as "blocked"
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_global_max(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
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
    w = np.exp(scores - scores.max())  # one max for every head and row
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_weights_transposed(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q.T), split(X @ W_k.T), split(X @ W_v.T)  # nn.Linear's layout
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o.T


def mha_qkv_weights_transposed(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q.T), split(X @ W_k.T), split(X @ W_v.T)  # W_o is used the right way
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_no_projections(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X), split(X), split(X)  # W_q, W_k and W_v are never applied
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


def mha_strided_heads(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        # (n, d_head, n_heads): head h takes every n_heads-th column ...
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
    # ... and the merge is the exact inverse, so the heads are consistent but strided.
    return np.moveaxis(heads, -3, -1).reshape(*lead, n, d_model) @ W_o


def mha_reshape_heads_first(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return t.reshape(*lead, n_heads, n, d_head)  # no transpose: tokens and columns mixed

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return heads.reshape(*lead, n, d_model) @ W_o


def mha_rounded(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
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
    return np.round(np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o, 4)


def mha_three_dims_only(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    b, n, d_model = X.shape  # (batch, n, d_model) only
    d_head = d_model // n_heads

    def split(t):
        return t.reshape(b, n, n_heads, d_head).transpose(0, 2, 1, 3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_head)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return heads.transpose(0, 2, 1, 3).reshape(b, n, d_model) @ W_o


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


# --- two mistakes at once ---------------------------------------------------------------------
# Parameterised versions of the functions above, one option per mistake, so the diagnosis can
# try every pair of mistakes (grader.engine.diagnosis._pairs). Not module sources for students.

ATTENTION_OPTIONS: dict[str, dict[str, str | None]] = {
    # option name -> the misconception code it shows (None: the right way)
    "scale": {
        "sqrt_d_k": None,
        "none": "missing-scale",
        "d_k": "scale-by-d",
        "sqrt_d_v": "wrong-dimension",
        "sqrt_m": "wrong-dimension",
        "sqrt_n": "wrong-dimension",
    },
    "mask": {
        "neg_inf": None,
        "ignored": "mask-ignored",
        "inverted": "mask-inverted",
        "zero": "mask-wrong-fill",
        "nan": "mask-wrong-fill",
    },
    "softmax": {
        "stable": None,
        "naive": "unstable-softmax",
        "global_max": "unstable-softmax",
        "queries": "softmax-wrong-axis",
        "unnormalized": "unnormalized-weights",
    },
}

MHA_OPTIONS: dict[str, dict[str, str | None]] = {
    # "transposed": X @ W.T for all four matrices (nn.Linear's layout); "transposed_qkv": for
    # W_q, W_k, W_v only.
    "proj": {
        "ok": None,
        "transposed": "weights-transposed",
        "transposed_qkv": "weights-transposed",
        "none": "missing-projections",
    },
    "out": {"ok": None, "none": "missing-output-projection"},
    "scale": {
        "sqrt_d_head": None,
        "none": "missing-scale",
        "d_head": "scale-by-d",
        "sqrt_d_model": "scale-by-model-width",
    },
    "split": {"ok": None, "interleaved": "wrong-head-split", "heads_first": "wrong-head-split"},
    "mask": {"neg_inf": None, "ignored": "mask-ignored", "inverted": "mask-inverted"},
    "softmax": {
        "stable": None,
        "naive": "unstable-softmax",
        "queries": "softmax-wrong-axis",
        "unnormalized": "unnormalized-weights",
    },
}


def _masked_scores(scores, mask, how):
    if mask is None or how == "ignored":
        return scores
    if how == "inverted":
        return np.where(mask, -np.inf, scores)
    if how == "zero":
        return scores * mask
    if how == "nan":
        return np.where(mask, scores, np.nan)
    return np.where(mask, scores, -np.inf)


def _weights(scores, how):
    if how == "naive":
        w = np.exp(scores)
        return w / w.sum(axis=-1, keepdims=True)
    if how == "global_max":
        w = np.exp(scores - np.max(scores))
        return w / w.sum(axis=-1, keepdims=True)
    if how == "queries":
        w = np.exp(scores - scores.max(axis=-2, keepdims=True))
        return w / w.sum(axis=-2, keepdims=True)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    if how == "unnormalized":
        return w
    return w / w.sum(axis=-1, keepdims=True)


def attention_variant(
    Q, K, V, mask=None, *, scale="sqrt_d_k", mask_how="neg_inf", softmax="stable"
):
    divisor = {
        "sqrt_d_k": math.sqrt(Q.shape[-1]),
        "none": 1.0,
        "d_k": float(Q.shape[-1]),
        "sqrt_d_v": math.sqrt(V.shape[-1]),
        "sqrt_m": math.sqrt(K.shape[-2]),
        "sqrt_n": math.sqrt(Q.shape[-2]),
    }[scale]
    scores = _masked_scores(Q @ np.swapaxes(K, -1, -2) / divisor, mask, mask_how)
    return _weights(scores, softmax) @ V


def mha_variant(
    X,
    W_q,
    W_k,
    W_v,
    W_o,
    n_heads,
    mask=None,
    *,
    proj="ok",
    out="ok",
    scale="sqrt_d_head",
    split="ok",
    mask_how="neg_inf",
    softmax="stable",
):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def project(w):
        if proj == "none":
            return X
        return X @ w.T if proj.startswith("transposed") else X @ w

    def heads(t):
        if split == "interleaved":
            return np.moveaxis(t.reshape(*lead, n, d_head, n_heads), -1, -3)
        if split == "heads_first":
            return t.reshape(*lead, n_heads, n, d_head)
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = heads(project(W_q)), heads(project(W_k)), heads(project(W_v))
    divisor = {
        "sqrt_d_head": math.sqrt(d_head),
        "none": 1.0,
        "d_head": float(d_head),
        "sqrt_d_model": math.sqrt(d_model),
    }[scale]
    m = None
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        while m.ndim < 2:
            m = m[None]
        m = m[..., None, :, :]
    scores = _masked_scores(q @ np.swapaxes(k, -1, -2) / divisor, m, mask_how)
    merged = _weights(scores, softmax) @ v
    if split == "heads_first":
        concat = merged.reshape(*lead, n, d_model)
    else:
        concat = np.swapaxes(merged, -2, -3).reshape(*lead, n, d_model)
    if out == "none":
        return concat
    return concat @ (W_o.T if proj == "transposed" else W_o)
