import numpy as np


def attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.einsum("id,jd->ij", Q, K) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return np.einsum("ij,jv->iv", w, V)
