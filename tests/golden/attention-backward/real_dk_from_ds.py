import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    scale = Q.shape[-1] ** -0.5
    S = Q @ np.swapaxes(K, -1, -2) * scale
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(-1, keepdims=True))
    P = P / P.sum(-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(P * dP, -1, keepdims=True))
    # symmetric to dQ
    dQ = dS @ K * scale
    dK = dS @ Q * scale
    return dQ, dK, dV
