import numpy as np


def attention(Q, K, V, mask=None):
    scores = Q.dot(K.T) / 8.0  # sqrt(64)
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return w.dot(V)
