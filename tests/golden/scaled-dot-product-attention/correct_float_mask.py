import numpy as np


def attention(Q, K, V, mask=None):
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
    if mask is not None:
        keep = np.asarray(mask).astype(float)
        scores = scores * keep + (1.0 - keep) * -1e9
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    return np.matmul(w / w.sum(axis=-1, keepdims=True), V)
