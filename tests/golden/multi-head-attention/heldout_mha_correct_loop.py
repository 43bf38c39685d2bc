import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_model = W_q.shape[0]
    d_head = d_model // n_heads
    Q = np.matmul(X, W_q)
    K = np.matmul(X, W_k)
    V = np.matmul(X, W_v)
    head_outputs = []
    for h in range(n_heads):
        lo, hi = h * d_head, (h + 1) * d_head
        q, k, v = Q[..., lo:hi], K[..., lo:hi], V[..., lo:hi]
        scores = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(d_head)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        scores -= np.max(scores, axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights /= np.sum(weights, axis=-1, keepdims=True)
        head_outputs.append(np.matmul(weights, v))
    concat = np.concatenate(head_outputs, axis=-1)
    return np.matmul(concat, W_o)
