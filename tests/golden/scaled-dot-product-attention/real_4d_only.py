import numpy as np


def attention(Q, K, V, mask=None):
    # shapes: (batch, heads, seq_len, d_k), like in the transformer code
    batch, heads, seq_len, d_k = Q.shape
    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    attn = np.exp(scores)
    attn = attn / attn.sum(axis=-1, keepdims=True)
    return attn @ V
