import numpy as np


def _attend(q, k, v, mask):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    return s / s.sum(axis=-1, keepdims=True) @ v


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    qs = np.split(X @ W_q, n_heads, axis=-1)
    ks = np.split(X @ W_k, n_heads, axis=-1)
    vs = np.split(X @ W_v, n_heads, axis=-1)
    heads = [_attend(q, k, v, mask) for q, k, v in zip(qs, ks, vs)]
    return np.concatenate(heads, axis=-1) @ W_o
