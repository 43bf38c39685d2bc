import numpy as np


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    # nn.Linear convention: y = x @ W.T
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    d_head = X.shape[-1] // n_heads
    outs = []
    for h in range(n_heads):
        s = slice(h * d_head, (h + 1) * d_head)
        scores = Q[..., s] @ K[..., s].T / np.sqrt(d_head)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        outs.append(softmax(scores) @ V[..., s])
    return np.concatenate(outs, axis=-1) @ W_o.T
