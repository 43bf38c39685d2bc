import math

import numpy as np


def _stable_softmax(z):
    z_max = np.max(z, axis=-1, keepdims=True)
    ez = np.exp(z - z_max)
    return ez / np.sum(ez, axis=-1, keepdims=True)


def attention(Q, K, V, mask=None):
    Q = np.asarray(Q, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    d_k = Q.shape[-1]
    scores = Q @ K.swapaxes(-1, -2)
    scores = scores / math.sqrt(d_k)
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    return _stable_softmax(scores) @ V
