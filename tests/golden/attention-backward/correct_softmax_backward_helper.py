import numpy as np


def softmax(x):
    x = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=-1, keepdims=True)


def softmax_backward(p, g):
    return p * (g - np.sum(g * p, axis=-1, keepdims=True))


def T(a):
    return np.swapaxes(a, -1, -2)


def attention_backward(Q, K, V, dO, mask=None):
    scale = np.sqrt(Q.shape[-1])
    scores = Q @ T(K) / scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    P = softmax(scores)
    dV = T(P) @ dO
    dS = softmax_backward(P, dO @ T(V)) / scale
    return dS @ K, T(dS) @ Q, dV
