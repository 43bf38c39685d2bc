import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    d = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d)
    E = np.exp(S)
    if mask is not None:
        E = E * mask
    P = E / E.sum(-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - (P * dP).sum(-1, keepdims=True))
    return dS @ K / np.sqrt(d), np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d), dV
