import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads
    q = np.swapaxes((X @ W_q.T).reshape(*lead, n, n_heads, d_head), -2, -3)
    k = np.swapaxes((X @ W_k.T).reshape(*lead, n, n_heads, d_head), -2, -3)
    v = np.swapaxes((X @ W_v.T).reshape(*lead, n, n_heads, d_head), -2, -3)
    scores = q @ np.swapaxes(k, -1, -2)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        scores = np.where(m[..., None, :, :] if m.ndim >= 2 else m, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    return np.swapaxes(w @ v, -2, -3).reshape(*lead, n, d_model) @ W_o.T
