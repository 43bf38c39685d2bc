"""The known wrong implementations of multi-head attention, as students write them.

Trusted code: OUR functions, each self-contained (``np`` and ``math`` only) so that
``WrongImplementation.source`` is a student-style module. Only their bodies live here; the
catalogue that names them, with its codes and tags, is ``kinds.multi_head``.
"""

from __future__ import annotations

import math

import numpy as np

from grader.engine.kinds.attention_mistakes import masked_scores, variant_weights

# --- one mistake each ---------------------------------------------------------------


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


def mha_mask_tiled_for_heads(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        # One copy of the mask per head: the (n_heads, n, n) scores of one sequence only.
        scores[np.tile(~mask, (n_heads, 1, 1))] = -np.inf
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (w / w.sum(axis=-1, keepdims=True)) @ v
    return np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model) @ W_o


# --- two mistakes at once ----------------------------------------------------------------------
# proj="transposed": X @ W.T for all four matrices (nn.Linear's layout); "transposed_qkv": for
# W_q, W_k, W_v only.


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
    scores = masked_scores(q @ np.swapaxes(k, -1, -2) / divisor, m, mask_how)
    merged = variant_weights(scores, softmax) @ v
    if split == "heads_first":
        concat = merged.reshape(*lead, n, d_model)
    else:
        concat = np.swapaxes(merged, -2, -3).reshape(*lead, n, d_model)
    if out == "none":
        return concat
    return concat @ (W_o.T if proj == "transposed" else W_o)
