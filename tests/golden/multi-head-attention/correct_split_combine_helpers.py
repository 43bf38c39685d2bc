import numpy as np


def split_heads(x, n_heads):
    """(..., n, d_model) -> (..., n_heads, n, d_head)"""
    *lead, n, d_model = x.shape
    x = x.reshape(*lead, n, n_heads, d_model // n_heads)
    return np.swapaxes(x, -3, -2)


def combine_heads(x):
    """(..., n_heads, n, d_head) -> (..., n, d_model)"""
    x = np.swapaxes(x, -3, -2)
    *lead, n, h, d_head = x.shape
    return x.reshape(*lead, n, h * d_head)


def scaled_dot_product(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    return (w / w.sum(axis=-1, keepdims=True)) @ v


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    q = split_heads(X @ W_q, n_heads)
    k = split_heads(X @ W_k, n_heads)
    v = split_heads(X @ W_v, n_heads)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.ndim == 1:
            mask = mask[None, :]
        mask = np.expand_dims(mask, -3)  # the same mask for every head
    return combine_heads(scaled_dot_product(q, k, v, mask)) @ W_o
