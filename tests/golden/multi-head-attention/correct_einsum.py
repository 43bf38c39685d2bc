import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *batch, n, d_model = X.shape
    d_head = d_model // n_heads
    q = (X @ W_q).reshape(*batch, n, n_heads, d_head) / np.sqrt(d_head)
    k = (X @ W_k).reshape(*batch, n, n_heads, d_head)
    v = (X @ W_v).reshape(*batch, n, n_heads, d_head)
    s = np.einsum("...ihd,...jhd->...hij", q, k)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        m = m.reshape((1,) * max(0, 2 - m.ndim) + m.shape)
        s = np.where(m[..., None, :, :], s, -np.inf)
    s = s - s.max(-1, keepdims=True)
    w = np.exp(s)
    w /= w.sum(-1, keepdims=True)
    o = np.einsum("...hij,...jhd->...ihd", w, v).reshape(*batch, n, d_model)
    return o @ W_o
