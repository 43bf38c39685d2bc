"""A batch mistake is named only for a function right in 2-D and wrong with batch axes."""

from __future__ import annotations

import numpy as np

from grader.engine import reference
from tests.grader.test_diagnosis import diagnosis_of


def attention_softmax_over_queries(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    # axis=0: the queries in 2-D, the batch axis with batch axes. Wrong in both, for one reason.
    w = np.exp(scores - scores.max(axis=0, keepdims=True))
    return (w / w.sum(axis=0, keepdims=True)) @ V


def mha_softmax_over_axis_0(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *batch, n, d_model = X.shape
    d_head = d_model // n_heads

    def heads(t):
        return np.swapaxes(t.reshape(*batch, n, n_heads, d_head), -3, -2)

    q, k, v = heads(X @ W_q), heads(X @ W_k), heads(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    w = np.exp(scores - scores.max(axis=0, keepdims=True))
    w = w / w.sum(axis=0, keepdims=True)
    return np.swapaxes(w @ v, -3, -2).reshape(*batch, n, d_model) @ W_o


def attention_flattens_the_batch(Q, K, V, mask=None):
    # Right in 2-D; with batch axes every query sees every batch element's keys.
    d_k = Q.shape[-1]
    q, k, v = Q.reshape(-1, d_k), K.reshape(-1, d_k), V.reshape(-1, V.shape[-1])
    scores = q @ k.T / np.sqrt(d_k)
    if mask is not None and Q.ndim == 2:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = (w / w.sum(axis=-1, keepdims=True)) @ v
    return out.reshape(*Q.shape[:-1], V.shape[-1])


def test_a_softmax_over_the_wrong_axis_is_not_said_to_lack_batch_support():
    assert diagnosis_of(reference.KIND_ATTENTION, attention_softmax_over_queries) == (
        "softmax-wrong-axis",
    )


def test_a_multi_head_softmax_over_axis_0_gets_no_batch_code():
    assert not {
        code
        for code in diagnosis_of(reference.KIND_MULTI_HEAD, mha_softmax_over_axis_0)
        if code.startswith("batch-")
    }


def test_a_function_right_in_2d_and_wrong_with_batch_axes_still_gets_it():
    assert diagnosis_of(reference.KIND_ATTENTION, attention_flattens_the_batch) == (
        "batch-unsupported",
    )
