import numpy as np


def attention(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    s = s - np.max(s, axis=-1, keepdims=True)
    w = np.exp(s)
    w = w / np.sum(w, axis=-1, keepdims=True)
    return w @ v


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_model = X.shape[-1]
    d_head = d_model // n_heads
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    outs = [
        attention(
            Q[..., i * d_head : (i + 1) * d_head],
            K[..., i * d_head : (i + 1) * d_head],
            V[..., i * d_head : (i + 1) * d_head],
            mask,
        )
        for i in range(n_heads)
    ]
    return np.concatenate(outs, axis=-1)
