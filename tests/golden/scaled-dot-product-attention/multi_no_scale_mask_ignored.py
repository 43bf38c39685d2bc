import numpy as np


def attention(Q, K, V, mask=None):
    scores = np.matmul(Q, np.swapaxes(K, -1, -2))
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return np.matmul(w, V)
