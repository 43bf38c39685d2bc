import numpy as np


def attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    # subtract the max for numerical stability
    e = np.exp(scores - np.max(scores))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V
