import numpy as np

SCALE = 8.0  # sqrt(64), as in the paper


def attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / SCALE
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V
