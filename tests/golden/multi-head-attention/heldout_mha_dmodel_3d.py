import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    B, T, C = X.shape
    hs = C // n_heads
    q = (X @ W_q).reshape(B, T, n_heads, hs).transpose(0, 2, 1, 3)
    k = (X @ W_k).reshape(B, T, n_heads, hs).transpose(0, 2, 1, 3)
    v = (X @ W_v).reshape(B, T, n_heads, hs).transpose(0, 2, 1, 3)
    att = (q @ k.transpose(0, 1, 3, 2)) / np.sqrt(C)
    if mask is not None:
        att = np.where(mask, att, -np.inf)
    att = np.exp(att - att.max(axis=-1, keepdims=True))
    att = att / att.sum(axis=-1, keepdims=True)
    y = att @ v
    y = y.transpose(0, 2, 1, 3).reshape(B, T, C)
    return y @ W_o
