import numpy as np


def attention(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    return (s / s.sum(axis=-1, keepdims=True)) @ v


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    d_head = X.shape[-1] // n_heads
    heads = []
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        heads.append(attention(Q[..., cols], K[..., cols], V[..., cols], mask))
    return np.concatenate(heads, axis=-1)
