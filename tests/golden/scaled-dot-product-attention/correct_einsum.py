import math

import numpy as np


def attention(Q, K, V, mask=None):
    scores = np.einsum("...id,...jd->...ij", Q, K) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    scores -= scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(axis=-1, keepdims=True)
    return np.einsum("...ij,...jv->...iv", w, V)
