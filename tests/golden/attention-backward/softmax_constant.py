import math

import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dS = dO @ np.swapaxes(V, -1, -2)  # the softmax treated as a constant: no Jacobian
    if mask is not None:
        dS = np.where(mask, dS, 0.0)
    dQ = dS @ K / math.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / math.sqrt(d_k)
    return dQ, dK, dV
