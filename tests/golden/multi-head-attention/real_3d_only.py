import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    batch_size, seq_len, d_model = X.shape
    d_head = d_model // n_heads

    def split_heads(t):
        # (batch, seq, d_model) -> (batch, heads, seq, d_head)
        return t.reshape(batch_size, seq_len, n_heads, d_head).transpose(0, 2, 1, 3)

    q = split_heads(np.matmul(X, W_q))
    k = split_heads(np.matmul(X, W_k))
    v = split_heads(np.matmul(X, W_v))

    scores = np.matmul(q, k.transpose(0, 1, 3, 2)) / np.sqrt(d_head)
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    scores = scores - np.max(scores, axis=-1, keepdims=True)
    attn = np.exp(scores)
    attn = attn / np.sum(attn, axis=-1, keepdims=True)

    out = np.matmul(attn, v).transpose(0, 2, 1, 3).reshape(batch_size, seq_len, d_model)
    return np.matmul(out, W_o)
