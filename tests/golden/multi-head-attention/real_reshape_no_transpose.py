import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *batch, n, d_model = X.shape
    d_head = d_model // n_heads
    # (..., n, d_model) -> (..., n_heads, n, d_head)
    q = (X @ W_q).reshape(*batch, n_heads, n, d_head)
    k = (X @ W_k).reshape(*batch, n_heads, n, d_head)
    v = (X @ W_v).reshape(*batch, n_heads, n, d_head)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.ndim >= 2:
            mask = mask[..., None, :, :]
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    out = (w @ v).reshape(*batch, n, d_model)
    return out @ W_o
