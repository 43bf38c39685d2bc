import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    Kt = np.swapaxes(K, -1, -2)
    S = Q @ Kt / np.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(-1, keepdims=True))
    P = P / P.sum(-1, keepdims=True)

    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = dP
    if mask is not None:
        dS = np.where(mask, dS, 0.0)
    dQ = dS @ K / np.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d_k)
    return dQ, dK, dV
