import numpy as np


def attention(Q, K, V, mask=None):
    # Q, K, V: (batch, heads, seq, dim)
    d_k = Q.shape[3]
    scores = np.matmul(Q, K.transpose(0, 1, 3, 2)) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask == 0, np.nan, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return np.matmul(w, V)
