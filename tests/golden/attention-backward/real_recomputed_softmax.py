import numpy as np


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def forward(Q, K, V, mask=None):
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    return softmax(S) @ V


def attention_backward(Q, K, V, dO, mask=None):
    d = Q.shape[-1]
    # recompute the attention weights (saves memory, like flash attention)
    P = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(d))
    if mask is not None:
        P_masked = softmax(np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(d), -np.inf))
    else:
        P_masked = P
    dV = np.swapaxes(P_masked, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - (P * dP).sum(-1, keepdims=True))
    return dS @ K / np.sqrt(d), np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d), dV
