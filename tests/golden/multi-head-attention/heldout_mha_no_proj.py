import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_model = X.shape[-1]
    d_head = d_model // n_heads
    heads = []
    for h in range(n_heads):
        part = X[..., h * d_head : (h + 1) * d_head]
        scores = part @ np.swapaxes(part, -1, -2) / np.sqrt(d_head)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        scores = scores - scores.max(axis=-1, keepdims=True)
        w = np.exp(scores)
        w = w / w.sum(axis=-1, keepdims=True)
        heads.append(w @ part)
    return np.concatenate(heads, axis=-1) @ W_o
