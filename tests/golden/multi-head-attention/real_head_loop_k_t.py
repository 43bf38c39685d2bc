import numpy as np


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    d_head = Q.shape[-1] // n_heads
    heads = []
    for h in range(n_heads):
        q_h = Q[..., h * d_head : (h + 1) * d_head]
        k_h = K[..., h * d_head : (h + 1) * d_head]
        v_h = V[..., h * d_head : (h + 1) * d_head]
        scores = q_h @ k_h.T / np.sqrt(d_head)
        if mask is not None:
            scores = np.where(mask, scores, -1e9)
        heads.append(softmax(scores) @ v_h)
    return np.concatenate(heads, axis=-1) @ W_o
