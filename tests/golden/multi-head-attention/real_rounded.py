import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *batch, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*batch, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        scores = np.where(mask[..., None, :, :] if mask.ndim >= 2 else mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    out = np.swapaxes(w @ v, -2, -3).reshape(*batch, n, d_model) @ W_o
    return out.round(4)
