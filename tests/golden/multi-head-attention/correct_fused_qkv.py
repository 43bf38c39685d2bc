import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads
    qkv = X @ np.concatenate([W_q, W_k, W_v], axis=1)  # (..., n, 3 * d_model)
    qkv = qkv.reshape(*lead, n, 3, n_heads, d_head)
    qkv = np.moveaxis(qkv, -3, 0)  # (3, ..., n, heads, d_head)
    q, k, v = (np.swapaxes(t, -2, -3) for t in qkv)  # (..., heads, n, d_head)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        if m.ndim == 1:
            m = m[None, :]
        scores = np.where(m[..., None, :, :], scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(axis=-1, keepdims=True)
    out = np.swapaxes(w @ v, -2, -3).reshape(*lead, n, d_model)
    return out @ W_o
