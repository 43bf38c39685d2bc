import math

import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    n, d_k = Q.shape  # matrices only
    S = Q @ K.T / math.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=1).reshape(n, 1))
    P = P / P.sum(axis=1).reshape(n, 1)
    dP = dO @ V.T
    dS = P * (dP - np.sum(dP * P, axis=1).reshape(n, 1))
    return dS @ K / math.sqrt(d_k), dS.T @ Q / math.sqrt(d_k), P.T @ dO
