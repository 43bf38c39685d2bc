import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    s = np.sqrt(Q.shape[-1])
    Q /= s
    K /= s
    S = Q @ np.swapaxes(K, -1, -2) * s
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(-1, keepdims=True))
    P = P / P.sum(-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - (P * dP).sum(-1, keepdims=True))
    return dS @ K, np.swapaxes(dS, -1, -2) @ Q, dV
