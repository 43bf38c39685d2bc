import numpy as np


def attention(Q, K, V, mask=None):
    d = V.shape[-1]  # dimension of the head
    scores = Q @ K.T / np.sqrt(d)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    scores = np.exp(scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores @ V
