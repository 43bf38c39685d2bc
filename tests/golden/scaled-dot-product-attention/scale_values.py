import numpy as np


def attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    V = V / np.sqrt(d_k)  # keep the outputs small
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V
