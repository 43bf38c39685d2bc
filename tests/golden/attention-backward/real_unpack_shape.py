import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    n, d_k = Q.shape
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - (dP * P).sum(-1, keepdims=True))
    return (
        dS @ K / np.sqrt(d_k),
        np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d_k),
        np.swapaxes(P, -1, -2) @ dO,
    )
