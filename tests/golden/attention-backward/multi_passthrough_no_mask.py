import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    scale = np.sqrt(Q.shape[-1])
    weights = np.exp(Q @ np.swapaxes(K, -1, -2) / scale)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    grad_scores = dO @ np.swapaxes(V, -1, -2)
    grad_q = grad_scores @ K / scale
    grad_k = np.swapaxes(grad_scores, -1, -2) @ Q / scale
    return grad_q, grad_k, np.swapaxes(weights, -1, -2) @ dO
