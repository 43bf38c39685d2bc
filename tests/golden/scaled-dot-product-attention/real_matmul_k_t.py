import math

import numpy as np


def attention(Q, K, V, mask=None):
    d_k = K.shape[1]
    scores = Q @ K.T / math.sqrt(d_k)
    if mask is not None:
        scores[~mask] = -np.inf
    scores -= scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    return p @ V
