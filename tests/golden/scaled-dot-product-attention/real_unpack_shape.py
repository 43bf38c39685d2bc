import numpy as np


def attention(Q, K, V, mask=None):
    n, d_k = Q.shape
    m, _ = K.shape
    scores = Q @ np.transpose(K) / np.sqrt(d_k)
    assert scores.shape == (n, m)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - np.max(scores, axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / np.sum(w, axis=-1, keepdims=True)
    return w @ V
