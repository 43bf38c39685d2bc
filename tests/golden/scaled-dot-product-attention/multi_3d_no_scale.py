import numpy as np


def attention(Q, K, V, mask=None):
    # (batch, seq, d) inputs
    scores = np.matmul(Q, K.transpose(0, 2, 1))
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.matmul(weights, V)
