import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_model = X.shape[-1]
    d_head = d_model // n_heads
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    head_outputs = []
    for i in range(n_heads):
        q = Q[..., i * d_head : (i + 1) * d_head]
        k = K[..., i * d_head : (i + 1) * d_head]
        v = V[..., i * d_head : (i + 1) * d_head]
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_model)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        head_outputs.append(weights @ v)
    return np.concatenate(head_outputs, axis=-1) @ W_o
