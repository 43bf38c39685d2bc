import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(-1, keepdims=True))
    P = P / (P.sum(-1, keepdims=True))
    dV = np.swapaxes(P, -1, -2) @ dO
    P_safe = np.maximum(P, 1e-9)  # avoid dead gradients
    if mask is not None:
        P_safe = P_safe * mask
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P_safe * (dP - np.sum(dP * P_safe, -1, keepdims=True))
    return dS @ K / np.sqrt(d_k), np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d_k), dV
