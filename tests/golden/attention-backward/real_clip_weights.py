import numpy as np

EPS = 1e-6


def attention_backward(Q, K, V, dO, mask=None):
    d = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(-1, keepdims=True))
    P = P / P.sum(-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    P = np.clip(P, EPS, 1.0)  # keep gradients from dying
    if mask is not None:
        P = np.where(mask, P, 0.0)
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - (P * dP).sum(-1, keepdims=True))
    return dS @ K / np.sqrt(d), np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d), dV
