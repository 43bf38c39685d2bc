import numpy as np


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attention_backward(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    P = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k))
    dV = np.swapaxes(P, -1, -2) @ dO
    dS = dO @ np.swapaxes(V, -1, -2)
    dQ = dS @ K / np.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d_k)
    return dQ, dK, dV
