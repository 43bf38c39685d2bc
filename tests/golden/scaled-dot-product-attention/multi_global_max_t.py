import numpy as np


def attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.dot(Q, K.T) / np.sqrt(d_k)
    if mask is not None:
        scores[~mask] = -np.inf
    scores = np.exp(scores - scores.max())
    scores = scores / scores.sum(axis=-1, keepdims=True)
    return np.dot(scores, V)
