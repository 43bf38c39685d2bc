import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    b, n, d = X.shape
    h = n_heads
    q = np.matmul(X, W_q).reshape(b, n, h, d // h).transpose(0, 2, 1, 3)
    k = np.matmul(X, W_k).reshape(b, n, h, d // h).transpose(0, 2, 1, 3)
    v = np.matmul(X, W_v).reshape(b, n, h, d // h).transpose(0, 2, 1, 3)
    scores = np.matmul(q, k.transpose(0, 1, 3, 2))
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    o = np.matmul(p, v).transpose(0, 2, 1, 3).reshape(b, n, d)
    return np.matmul(o, W_o)
