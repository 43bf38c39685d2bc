import numpy as np


def linear(x, w):
    # like torch.nn.functional.linear: y = x W^T
    return x @ w.T


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *batch, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(*batch, n, n_heads, d_head), -2, -3)

    q, k, v = split(linear(X, W_q)), split(linear(X, W_k)), split(linear(X, W_v))
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        scores = np.where(m[..., None, :, :] if m.ndim >= 2 else m, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    heads = np.swapaxes(w @ v, -2, -3).reshape(*batch, n, d_model)
    return linear(heads, W_o)
