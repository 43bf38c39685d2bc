import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_head = X.shape[-1] // n_heads
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    out = []
    for h in range(n_heads):
        c = slice(h * d_head, (h + 1) * d_head)
        s = Q[..., c] @ np.swapaxes(K[..., c], -1, -2)
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        p = p / p.sum(axis=-1, keepdims=True)
        out.append(p @ (V[..., c] / np.sqrt(d_head)))
    return np.concatenate(out, axis=-1) @ W_o
