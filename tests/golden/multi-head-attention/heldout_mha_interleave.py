import numpy as np


def split_heads(x, n_heads):
    *lead, n, d_model = x.shape
    d_head = d_model // n_heads
    # (..., n, d_head, n_heads) -> (..., n_heads, n, d_head)
    x = x.reshape(*lead, n, d_head, n_heads)
    return np.moveaxis(x, -1, -3)


def merge_heads(x):
    *lead, h, n, d_head = x.shape
    x = np.moveaxis(x, -3, -1)
    return x.reshape(*lead, n, d_head * h)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    q = split_heads(X @ W_q, n_heads)
    k = split_heads(X @ W_k, n_heads)
    v = split_heads(X @ W_v, n_heads)
    d_head = q.shape[-1]
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        s = np.where(m[..., None, :, :], s, -np.inf)
    s = s - s.max(-1, keepdims=True)
    a = np.exp(s)
    a /= a.sum(-1, keepdims=True)
    return merge_heads(a @ v) @ W_o
