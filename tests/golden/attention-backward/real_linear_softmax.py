import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    d = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - np.max(S, axis=-1, keepdims=True))
    P = P / np.sum(P, axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dS = dO @ np.swapaxes(V, -1, -2)
    if mask is not None:
        dS = dS * mask  # no gradient to masked keys
    return dS @ K / np.sqrt(d), np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d), dV
