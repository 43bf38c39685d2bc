import numpy as np


def attention(Q, K, V, mask=None):
    seq_len = K.shape[0]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(seq_len)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    return (w / w.sum(axis=-1, keepdims=True)) @ V
