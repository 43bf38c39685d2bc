import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_head = X.shape[-1] // n_heads
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    heads = []
    for h in range(n_heads):
        sl = slice(h * d_head, (h + 1) * d_head)
        scores = Q[..., sl] @ np.swapaxes(K[..., sl], -1, -2) / d_head
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        w = np.exp(scores - scores.max(axis=-1, keepdims=True))
        heads.append(w / w.sum(axis=-1, keepdims=True) @ V[..., sl])
    return np.concatenate(heads, axis=-1)
