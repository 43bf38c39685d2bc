import numpy as np


def attention(Q, K, V, mask=None):
    scores = np.matmul(Q, np.swapaxes(K, -2, -1)) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.copy()
        scores[..., mask] = -np.inf
    scores = scores - scores.max(axis=-1, keepdims=True)
    attn = np.exp(scores)
    attn = attn / attn.sum(axis=-1, keepdims=True)
    return np.matmul(attn, V)
