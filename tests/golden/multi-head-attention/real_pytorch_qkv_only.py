import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_model = X.shape[-1]
    d_head = d_model // n_heads
    lead = X.shape[:-2]
    n = X.shape[-2]

    # project (weights stored as (out_features, in_features))
    Q = np.einsum("...nd,od->...no", X, W_q)
    K = np.einsum("...nd,od->...no", X, W_k)
    V = np.einsum("...nd,od->...no", X, W_v)

    Q = np.moveaxis(Q.reshape(*lead, n, n_heads, d_head), -2, -3)
    K = np.moveaxis(K.reshape(*lead, n, n_heads, d_head), -2, -3)
    V = np.moveaxis(V.reshape(*lead, n, n_heads, d_head), -2, -3)

    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(d_head)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        if m.ndim >= 2:
            m = np.expand_dims(m, -3)
        scores = np.where(m, scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    P = np.exp(scores)
    P /= P.sum(axis=-1, keepdims=True)
    out = np.moveaxis(P @ V, -3, -2).reshape(*lead, n, d_model)
    return out @ W_o
