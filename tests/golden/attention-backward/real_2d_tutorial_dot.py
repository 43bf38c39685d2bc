import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    d = Q.shape[1]
    S = np.dot(Q, K.T) / np.sqrt(d)
    if mask is not None:
        S[~mask] = -np.inf
    P = np.exp(S - S.max(axis=1, keepdims=True))
    P = P / P.sum(axis=1, keepdims=True)
    dV = np.dot(P.T, dO)
    dP = np.dot(dO, V.T)
    dS = P * (dP - (dP * P).sum(axis=1, keepdims=True))
    return np.dot(dS, K) / np.sqrt(d), np.dot(dS.T, Q) / np.sqrt(d), dV
