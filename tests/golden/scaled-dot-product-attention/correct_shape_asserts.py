import numpy as np


def attention(Q, K, V, mask=None):
    *_, n, d_k = Q.shape
    *_, m, d_k2 = K.shape
    assert d_k == d_k2, "Q and K must have the same last dimension"
    assert V.shape[-2] == m, "K and V must have the same number of rows"
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores -= np.max(scores, axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= np.sum(weights, axis=-1, keepdims=True)
    out = np.matmul(weights, V)
    assert out.shape[-2:] == (n, V.shape[-1])
    return out
