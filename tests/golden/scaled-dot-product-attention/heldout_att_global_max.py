import numpy as np


def attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = (Q @ np.swapaxes(K, -1, -2)) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    # subtract the max for numerical stability
    scores = scores - np.max(scores)
    exp = np.exp(scores)
    weights = exp / exp.sum(axis=-1, keepdims=True)
    return weights @ V
