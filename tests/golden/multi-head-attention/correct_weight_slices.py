import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_model = W_q.shape[0]
    d_head = d_model // n_heads
    heads = []
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        q = X @ W_q[:, cols]
        k = X @ W_k[:, cols]
        v = X @ W_v[:, cols]
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        heads.append(s / s.sum(axis=-1, keepdims=True) @ v)
    return np.concatenate(heads, axis=-1) @ W_o
