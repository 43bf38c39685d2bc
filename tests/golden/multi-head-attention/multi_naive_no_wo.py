import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    dh = d_model // n_heads
    q = np.swapaxes((X @ W_q).reshape(*lead, n, n_heads, dh), -2, -3)
    k = np.swapaxes((X @ W_k).reshape(*lead, n, n_heads, dh), -2, -3)
    v = np.swapaxes((X @ W_v).reshape(*lead, n, n_heads, dh), -2, -3)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(dh)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        s = np.where(m[..., None, :, :] if m.ndim >= 2 else m, s, -np.inf)
    e = np.exp(s)
    a = e / e.sum(axis=-1, keepdims=True)
    return np.swapaxes(a @ v, -2, -3).reshape(*lead, n, d_model)
