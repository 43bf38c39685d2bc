import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ K.transpose(-1, -2) / np.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = P.transpose(-1, -2) @ dO
    dP = dO @ V.transpose(-1, -2)
    dS = P * (dP - (P * dP).sum(axis=-1, keepdims=True))
    dQ = dS @ K / np.sqrt(d_k)
    dK = dS.transpose(-1, -2) @ Q / np.sqrt(d_k)
    return dQ, dK, dV
