import numpy as np


def attention(Q, K, V, mask=None):
    d_k = K.shape[-1]
    scores = (Q @ K.T) / d_k
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return w @ V
