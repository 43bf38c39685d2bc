import numpy as np


def softmax(x, axis=-1):
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    # like nn.Linear: y = x W^T
    Q = X @ W_q.T
    K = X @ W_k.T
    V = X @ W_v.T
    d_model = X.shape[-1]
    d_head = d_model // n_heads
    heads = []
    for h in range(n_heads):
        sl = slice(h * d_head, (h + 1) * d_head)
        s = Q[..., sl] @ np.swapaxes(K[..., sl], -1, -2) / np.sqrt(d_head)
        if mask is not None:
            s = np.where(mask, s, -1e9)
        heads.append(softmax(s) @ V[..., sl])
    return np.concatenate(heads, axis=-1) @ W_o.T
