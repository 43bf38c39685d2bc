import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        t = t.reshape(*lead, n, d_head, n_heads)
        return np.moveaxis(t, -1, -3)  # (..., heads, n, d_head)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        s = np.where(m[..., None, :, :] if m.ndim >= 2 else m, s, -np.inf)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    s = s / s.sum(axis=-1, keepdims=True)
    return np.swapaxes(s @ v, -2, -3).reshape(*lead, n, d_model)
