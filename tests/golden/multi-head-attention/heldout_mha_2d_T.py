import numpy as np


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    n, d_model = X.shape
    d_head = d_model // n_heads
    Q, K, V = X.dot(W_q), X.dot(W_k), X.dot(W_v)
    out = np.zeros((n, d_model))
    for h in range(n_heads):
        c = slice(h * d_head, (h + 1) * d_head)
        scores = Q[:, c].dot(K[:, c].T) / np.sqrt(d_head)
        if mask is not None:
            scores = np.where(mask, scores, -1e9)
        out[:, c] = softmax(scores).dot(V[:, c])
    return out.dot(W_o)
