import numpy as np


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def attention_backward(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    P = softmax(S)
    if mask is not None:
        P = P * mask
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - (P * dP).sum(axis=-1, keepdims=True))
    dQ = dS @ K / np.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d_k)
    return dQ, dK, dV
