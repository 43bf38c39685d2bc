import numpy as np


def attention(Q, K, V, mask=None):
    """Q: (batch, n, d_k), K: (batch, m, d_k), V: (batch, m, d_v)."""
    d_k = Q.shape[-1]
    scores = np.matmul(Q, K.transpose(0, 2, 1)) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.matmul(weights, V)
