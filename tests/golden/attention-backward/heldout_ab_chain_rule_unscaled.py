import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    dk = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(dk)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(-1, keepdims=True))
    P = P / P.sum(-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - (P * dP).sum(-1, keepdims=True))
    dQ = dS @ K
    dK = np.swapaxes(dS, -1, -2) @ Q
    return dQ, dK, dV
