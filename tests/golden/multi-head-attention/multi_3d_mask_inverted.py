import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    batch, seq, d_model = X.shape
    d_k = d_model // n_heads

    def heads(t):
        return t.reshape(batch, seq, n_heads, d_k).transpose(0, 2, 1, 3)

    Q, K, V = heads(X @ W_q), heads(X @ W_k), heads(X @ W_v)
    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d_k)
    if mask is not None:
        scores[..., mask] = -1e9  # hide the masked positions
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return (w @ V).transpose(0, 2, 1, 3).reshape(batch, seq, d_model) @ W_o
