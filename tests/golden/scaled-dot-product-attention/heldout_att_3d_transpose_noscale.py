import numpy as np

# batched attention for (batch, seq, dim) tensors


def attention(Q, K, V, mask=None):
    scores = np.matmul(Q, K.transpose(0, 2, 1))
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return np.matmul(w, V)
