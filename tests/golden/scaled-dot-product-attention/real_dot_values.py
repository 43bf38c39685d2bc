import numpy as np


def attention(Q, K, V, mask=None):
    scale = 1.0 / np.sqrt(Q.shape[-1])
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) * scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    attn = e / e.sum(axis=-1, keepdims=True)
    return np.dot(attn, V)
