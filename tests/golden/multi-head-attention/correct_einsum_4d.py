import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads
    q = (X @ W_q).reshape(*lead, n, n_heads, d_head)
    k = (X @ W_k).reshape(*lead, n, n_heads, d_head)
    v = (X @ W_v).reshape(*lead, n, n_heads, d_head)
    scores = np.einsum("...qhd,...khd->...hqk", q, k) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        if m.ndim >= 2:
            m = m[..., None, :, :]
        scores = np.where(m, scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(axis=-1, keepdims=True)
    out = np.einsum("...hqk,...khd->...qhd", w, v).reshape(*lead, n, d_model)
    return out @ W_o
