import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *batch, n, d_model = X.shape
    d_head = d_model // n_heads
    x = np.swapaxes(X.reshape(*batch, n, n_heads, d_head), -2, -3)
    scores = x @ np.swapaxes(x, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        scores = np.where(np.asarray(mask)[..., None, :, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return np.swapaxes(w @ x, -2, -3).reshape(*batch, n, d_model)
