import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -2, -1) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, float("-inf"))
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    grad_v = weights @ dO
    grad_w = dO @ np.swapaxes(V, -2, -1)
    grad_s = weights * (grad_w - np.sum(grad_w * weights, axis=-1, keepdims=True))
    grad_q = grad_s @ K / np.sqrt(d_k)
    grad_k = np.swapaxes(grad_s, -2, -1) @ Q / np.sqrt(d_k)
    return grad_q, grad_k, grad_v
