import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = (Q @ np.swapaxes(K, -1, -2)) / d_k**0.5
    if mask is not None:
        S = np.where(mask, S, -1e9)
    S = S - S.max(axis=-1, keepdims=True)
    P = np.exp(S) / np.exp(S).sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    row = np.sum(P * dP, axis=-1, keepdims=True)
    dS = P * (dP - row) / d_k**0.5
    return dS @ K, np.swapaxes(dS, -1, -2) @ Q, dV
