import numpy as np


def softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    n, d_model = X.shape
    d_head = d_model // n_heads
    Q = (X @ W_q).reshape(n, n_heads, d_head).transpose(1, 0, 2)
    K = (X @ W_k).reshape(n, n_heads, d_head).transpose(1, 0, 2)
    V = (X @ W_v).reshape(n, n_heads, d_head).transpose(1, 0, 2)
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(d_head)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    heads = softmax(scores) @ V  # (n_heads, n, d_head)
    concat = heads.transpose(1, 0, 2).reshape(n, d_model)
    return concat @ W_o
