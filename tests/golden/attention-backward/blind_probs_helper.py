import numpy as np


def attention_probs(Q, K):
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    S = S - S.max(-1, keepdims=True)
    P = np.exp(S)
    return P / P.sum(-1, keepdims=True)


def attention_backward(Q, K, V, dO, mask=None):
    P = attention_probs(Q, K)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - (P * dP).sum(-1, keepdims=True))
    dQ = dS @ K / np.sqrt(Q.shape[-1])
    dK = np.swapaxes(dS, -1, -2) @ Q / np.sqrt(Q.shape[-1])
    return dQ, dK, dV
