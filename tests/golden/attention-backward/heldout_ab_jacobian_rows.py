import numpy as np


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def attention_backward(Q, K, V, dO, mask=None):
    d = Q.shape[-1]
    S = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(d)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = softmax(S)
    dP = np.matmul(dO, np.swapaxes(V, -1, -2))
    dS = np.zeros_like(P)
    for idx in np.ndindex(*P.shape[:-1]):
        p = P[idx]
        J = np.diag(p) - np.outer(p, p)  # row Jacobian
        dS[idx] = J @ dP[idx]
    dQ = np.matmul(dS, K) / np.sqrt(d)
    dK = np.matmul(np.swapaxes(dS, -1, -2), Q) / np.sqrt(d)
    dV = np.matmul(np.swapaxes(P, -1, -2), dO)
    return dQ, dK, dV
