import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    d = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    A = np.exp(S - S.max(-1, keepdims=True))
    A /= A.sum(-1, keepdims=True)
    dV = A @ dO
    dA = dO @ np.swapaxes(V, -1, -2)
    dS = A * (dA - (A * dA).sum(-1, keepdims=True))
    return dS @ K, np.swapaxes(dS, -1, -2) @ Q, dV
