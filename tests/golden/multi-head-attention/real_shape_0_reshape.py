import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    seq_len = X.shape[0]
    d_model = W_q.shape[0]
    d_head = d_model // n_heads

    def split(t):
        return np.swapaxes(t.reshape(seq_len, n_heads, d_head), 0, 1)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    concat = np.swapaxes(w @ v, 0, 1).reshape(seq_len, d_model)
    return concat @ W_o
