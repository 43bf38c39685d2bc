import numpy as np


def attention(Q, K, V, mask=None):
    scores = Q @ K.T
    if mask is not None:
        scores[~mask] = -np.inf
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ V
