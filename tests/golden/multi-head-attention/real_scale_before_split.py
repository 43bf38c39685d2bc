import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads
    Q = (X @ W_q) / np.sqrt(d_model)  # scale the queries once
    K = X @ W_k
    V = X @ W_v

    def split(t):
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    scores = split(Q) @ np.swapaxes(split(K), -1, -2)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        if m.ndim >= 2:
            m = m[..., None, :, :]
        scores = np.where(m, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(axis=-1, keepdims=True)
    out = np.swapaxes(w @ split(V), -2, -3).reshape(*lead, n, d_model)
    return out @ W_o
