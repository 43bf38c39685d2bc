import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    q = np.stack(np.split(X @ W_q, n_heads, axis=1))  # (heads, n, d_head)
    k = np.stack(np.split(X @ W_k, n_heads, axis=1))
    v = np.stack(np.split(X @ W_v, n_heads, axis=1))
    d_head = q.shape[-1]
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(d_head)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    heads = w @ v
    return np.concatenate(list(heads), axis=1) @ W_o
