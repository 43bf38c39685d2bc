# Backward pass of scaled dot-product attention, following the forward step by step
import numpy as np


def T(x):
    """Transpose the last two axes (works with batch axes in front)."""
    return np.swapaxes(x, -1, -2)


def softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def attention_backward(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]

    # ---- forward (we need P again) ----
    S = Q @ T(K) / np.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -1e9)  # big negative so exp() gives 0
    P = softmax(S)
    # O = P @ V

    # ---- backward ----
    # O = P V  ->  dV = P^T dO,  dP = dO V^T
    dV = T(P) @ dO
    dP = dO @ T(V)

    # softmax backward, row by row: dS = P * (dP - sum(P * dP))
    row_dot = np.sum(P * dP, axis=-1, keepdims=True)
    dS = P * (dP - row_dot)

    # S = Q K^T / sqrt(d_k)
    dQ = dS @ K / np.sqrt(d_k)
    dK = T(dS) @ Q / np.sqrt(d_k)
    # print(dQ.shape, dK.shape, dV.shape)
    return dQ, dK, dV
