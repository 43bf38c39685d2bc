import numpy as np


def attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    return weights @ V
