import numpy as np


def _one(q, k, v, mask):
    s = q @ k.T / np.sqrt(q.shape[1])  # q, k, v are 2-D here
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    s = s - s.max(axis=1, keepdims=True)
    w = np.exp(s)
    w /= w.sum(axis=1, keepdims=True)
    return w @ v


def attention(Q, K, V, mask=None):
    n, m = Q.shape[-2], K.shape[-2]
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        batch = np.broadcast_shapes(batch, mask.shape[:-2])
        mask = np.broadcast_to(mask, batch + (n, m)).reshape(-1, n, m)
    Qb = np.broadcast_to(Q, batch + Q.shape[-2:]).reshape(-1, n, Q.shape[-1])
    Kb = np.broadcast_to(K, batch + K.shape[-2:]).reshape(-1, m, K.shape[-1])
    Vb = np.broadcast_to(V, batch + V.shape[-2:]).reshape(-1, m, V.shape[-1])
    out = [_one(Qb[i], Kb[i], Vb[i], None if mask is None else mask[i]) for i in range(len(Qb))]
    return np.stack(out).reshape(batch + (n, V.shape[-1]))
