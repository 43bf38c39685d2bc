import numpy as np


def attention(Q, K, V, mask=None):
    Q = Q.astype(np.float32)
    K = K.astype(np.float32)
    V = V.astype(np.float32)
    scores = Q.dot(K.T) / np.float32(np.sqrt(Q.shape[-1]))
    if mask is not None:
        scores[np.logical_not(mask)] = -np.inf
    scores -= scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return (e / e.sum(axis=-1, keepdims=True)).dot(V)
