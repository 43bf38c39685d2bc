import numpy as np

NEG_INF = -1e9


def attention(Q, K, V, mask=None):
    Q = np.asarray(Q, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    scores = np.matmul(Q, K.swapaxes(-1, -2)) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = scores + np.where(np.asarray(mask, dtype=bool), 0.0, NEG_INF)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    return np.matmul(w / w.sum(axis=-1, keepdims=True), V)
