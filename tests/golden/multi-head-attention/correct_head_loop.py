import math

import numpy as np


def softmax(s):
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    d_head = X.shape[-1] // n_heads
    outputs = []
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        scores = Q[..., cols] @ np.swapaxes(K[..., cols], -1, -2) / math.sqrt(d_head)
        if mask is not None:
            scores = np.where(mask, scores, -1e30)
        outputs.append(softmax(scores) @ V[..., cols])
    return np.concatenate(outputs, axis=-1) @ W_o
