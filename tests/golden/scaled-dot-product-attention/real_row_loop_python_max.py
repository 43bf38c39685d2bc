import numpy as np


def attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.zeros_like(scores)
    for i, row in enumerate(scores):
        row_max = max(row)
        e = np.exp(row - row_max)
        weights[i] = e / e.sum()
    return weights @ V
