"""The known wrong implementations of scaled dot-product attention, as students write them.

Trusted code: OUR functions, each self-contained (``np`` and ``math`` only) so that
``WrongImplementation.source`` is a student-style module. Only their bodies live here; the
catalogue that names them, with its codes and tags, is ``kinds.attention``.
"""

from __future__ import annotations

import math

import numpy as np

# --- one mistake each ---------------------------------------------------------------


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


def attention_mask_exact_shape(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores[~mask] = -np.inf  # a boolean index: the mask must have the scores' exact shape
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


# --- two mistakes at once ----------------------------------------------------------------------
# One function with every single mistake above as a keyword option, so the diagnosis can try
# every pair (WrongImplementation.variant says which option each function above is).


def masked_scores(scores, mask, how):
    if mask is None or how == "ignored":
        return scores
    if how == "inverted":
        return np.where(mask, -np.inf, scores)
    if how == "zero":
        return scores * mask
    if how == "nan":
        return np.where(mask, scores, np.nan)
    return np.where(mask, scores, -np.inf)


def variant_weights(scores, how):
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
    scores = masked_scores(Q @ np.swapaxes(K, -1, -2) / divisor, mask, mask_how)
    return variant_weights(scores, softmax) @ V
