import numpy as np


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)


def attention_backward(Q, K, V, dO, mask=None):
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    A = softmax(S)
    dA = dO @ np.swapaxes(V, -1, -2)
    dS = A * dA - A * np.sum(A * dA, axis=-1, keepdims=True)
    # chain rule through S = Q K^T
    return dS @ K, np.swapaxes(dS, -1, -2) @ Q, np.swapaxes(A, -1, -2) @ dO
