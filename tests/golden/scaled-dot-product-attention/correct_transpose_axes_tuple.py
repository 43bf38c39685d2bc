import numpy as np


def attention(Q, K, V, mask=None):
    axes = (*range(K.ndim - 2), K.ndim - 1, K.ndim - 2)
    scores = np.matmul(Q, np.transpose(K, axes)) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.matmul(weights, V)
