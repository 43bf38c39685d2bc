import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *batch, n, d_model = X.shape
    d_head = d_model // n_heads

    def heads(t):
        return np.swapaxes(t.reshape(*batch, n, n_heads, d_head), -3, -2)

    q, k, v = heads(X @ W_q), heads(X @ W_k), heads(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.ndim == 1:
            mask = mask[None, :]
        scores = np.where(mask[..., None, :, :], scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    out = np.swapaxes(w @ v, -3, -2).reshape(*batch, n, d_model)
    return out @ W_o
