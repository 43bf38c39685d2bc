import math

import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q = np.matmul(X, W_q)
    K = np.matmul(X, W_k)
    V = np.matmul(X, W_v)
    d_head = X.shape[-1] // n_heads
    out = []
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        s = np.matmul(Q[..., cols], np.swapaxes(K[..., cols], -1, -2)) / math.sqrt(d_head)
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        s = s - np.max(s, axis=-1, keepdims=True)
        p = np.exp(s)
        p = p / np.sum(p, axis=-1, keepdims=True)
        out.append(np.matmul(p, V[..., cols]))
    return np.matmul(np.concatenate(out, axis=-1), W_o)
