import math

import numpy as np


def _log_softmax(s):
    m = np.max(s, axis=-1, keepdims=True)
    return s - m - np.log(np.sum(np.exp(s - m), axis=-1, keepdims=True))


def attention(Q, K, V, mask=None):
    Kt = np.moveaxis(K, -1, -2)
    scores = np.matmul(Q, Kt) * (1.0 / math.sqrt(Q.shape[-1]))
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return np.matmul(np.exp(_log_softmax(scores)), V)
