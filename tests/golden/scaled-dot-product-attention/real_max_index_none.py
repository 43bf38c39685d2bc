import numpy as np


def attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=1)[:, None]
    w = np.exp(scores)
    w = w / w.sum(axis=1)[:, None]
    return w @ V
