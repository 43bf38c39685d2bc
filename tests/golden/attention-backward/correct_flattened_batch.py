import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    *lead, n, d = Q.shape
    m = K.shape[-2]
    q, k, v, do = (a.reshape(-1, a.shape[-2], a.shape[-1]) for a in (Q, K, V, dO))
    s = np.matmul(q, k.transpose(0, 2, 1)) / np.sqrt(d)
    if mask is not None:
        full = np.broadcast_to(mask, (*lead, n, m)).reshape(-1, n, m)
        s = np.where(full, s, -np.inf)
    s -= s.max(axis=2, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=2, keepdims=True)
    dv = np.matmul(p.transpose(0, 2, 1), do)
    dp = np.matmul(do, v.transpose(0, 2, 1))
    ds = p * (dp - (dp * p).sum(axis=2, keepdims=True))
    dq = np.matmul(ds, k) / np.sqrt(d)
    dk = np.matmul(ds.transpose(0, 2, 1), q) / np.sqrt(d)
    return dq.reshape(Q.shape), dk.reshape(K.shape), dv.reshape(V.shape)
