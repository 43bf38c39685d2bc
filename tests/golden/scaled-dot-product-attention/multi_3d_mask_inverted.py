import numpy as np


def attention(Q, K, V, mask=None):
    b, n, d_k = Q.shape
    scores = np.einsum("bnd,bmd->bnm", Q, K) / np.sqrt(d_k)
    if mask is not None:
        # masked positions get a large negative number
        scores = np.where(mask, -1e9, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p = p / p.sum(axis=-1, keepdims=True)
    return np.einsum("bnm,bmv->bnv", p, V)
