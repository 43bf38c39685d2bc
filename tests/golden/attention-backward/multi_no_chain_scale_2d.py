import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    n, d = Q.shape
    S = Q @ K.T / np.sqrt(d)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=1).reshape(n, 1))
    P = P / P.sum(axis=1).reshape(n, 1)
    dP = dO @ V.T
    dS = P * (dP - (dP * P).sum(axis=1).reshape(n, 1))
    return dS @ K, dS.T @ Q, P.T @ dO
