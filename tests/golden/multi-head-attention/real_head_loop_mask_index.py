import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_model = X.shape[-1]
    d_head = d_model // n_heads
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    outs = []
    for h in range(n_heads):
        sl = slice(h * d_head, (h + 1) * d_head)
        s = Q[..., sl] @ np.swapaxes(K[..., sl], -1, -2) / np.sqrt(d_head)
        if mask is not None:
            s[~mask] = -np.inf  # block the masked positions
        s = s - s.max(axis=-1, keepdims=True)
        p = np.exp(s)
        outs.append((p / p.sum(axis=-1, keepdims=True)) @ V[..., sl])
    return np.concatenate(outs, axis=-1) @ W_o
