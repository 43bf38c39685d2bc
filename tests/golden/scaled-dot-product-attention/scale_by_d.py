import numpy as np


def attention(Q, K, V, mask=None):
    d_k = K.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / d_k
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V
