import numpy as np


def attention(Q, K, V, mask=None):
    scale = 1.0 / np.sqrt(V.shape[-1])
    scores = np.matmul(Q, np.swapaxes(K, -2, -1)) * scale
    if mask is not None:
        scores = np.where(mask, scores, float("-inf"))
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return np.matmul(e / e.sum(axis=-1, keepdims=True), V)
