import numpy as np


def log_softmax(s):
    m = s.max(axis=-1, keepdims=True)
    return s - m - np.log(np.exp(s - m).sum(axis=-1, keepdims=True))


def attention(Q, K, V, mask=None):
    s = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1] ** 0.5
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    return np.exp(log_softmax(s)) @ V
