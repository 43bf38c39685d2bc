import numpy as np


def _swap_seq_heads(t):
    nd = t.ndim
    return np.transpose(t, (*range(nd - 3), nd - 2, nd - 3, nd - 1))


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads
    q = _swap_seq_heads((X @ W_q).reshape(*lead, n, n_heads, d_head))
    k = _swap_seq_heads((X @ W_k).reshape(*lead, n, n_heads, d_head))
    v = _swap_seq_heads((X @ W_v).reshape(*lead, n, n_heads, d_head))
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        s = np.where(m[..., None, :, :] if m.ndim >= 2 else m, s, -np.inf)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    s /= s.sum(axis=-1, keepdims=True)
    return _swap_seq_heads(s @ v).reshape(*lead, n, d_model) @ W_o
