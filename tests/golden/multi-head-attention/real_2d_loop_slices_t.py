import numpy as np


def softmax(x):
    x = x - np.max(x, axis=1, keepdims=True)
    return np.exp(x) / np.sum(np.exp(x), axis=1, keepdims=True)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    d_head = Q.shape[1] // n_heads
    heads = []
    for h in range(n_heads):
        q = Q[:, h * d_head : (h + 1) * d_head]
        k = K[:, h * d_head : (h + 1) * d_head]
        v = V[:, h * d_head : (h + 1) * d_head]
        scores = q @ k.T / np.sqrt(d_head)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        heads.append(softmax(scores) @ v)
    return np.hstack(heads) @ W_o
