import numpy as np


def attention(Q, K, V, mask=None):
    scores = (K @ Q.T).T / np.sqrt(Q.shape[-1])  # (n, m)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - np.max(scores, axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / np.sum(w, axis=-1, keepdims=True)
    return w @ V
