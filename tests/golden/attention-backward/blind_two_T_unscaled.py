import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    scale = np.sqrt(Q.shape[-1])
    S = Q @ K.T / scale
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P /= P.sum(axis=-1, keepdims=True)
    dV = P.T @ dO
    dP = dO @ V.T
    dS = P * (dP - (P * dP).sum(axis=-1, keepdims=True))
    dQ = dS @ K
    dK = dS.T @ Q
    return dQ, dK, dV
