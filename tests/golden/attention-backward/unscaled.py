import math

import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    S = Q @ np.swapaxes(K, -1, -2)  # no division by sqrt(d_k), forward or backward
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    return dS @ K, np.swapaxes(dS, -1, -2) @ Q, dV
