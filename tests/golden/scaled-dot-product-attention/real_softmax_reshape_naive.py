import numpy as np


def softmax(x):
    return np.exp(x) / np.sum(np.exp(x), axis=-1).reshape(-1, 1)


def attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return np.matmul(softmax(scores), V)
