import math

import numpy as np


def softmax(x):
    x = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=-1, keepdims=True)


def attention(query, key, value, mask=None):
    """Port of the PyTorch version: scores.masked_fill(mask == 0, -1e9)."""
    d_k = query.shape[-1]
    scores = np.matmul(query, key.swapaxes(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores[mask == 0] = -1e9
    p_attn = softmax(scores)
    return np.matmul(p_attn, value)
