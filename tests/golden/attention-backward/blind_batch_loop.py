import numpy as np


def _single(q, k, v, do, m):
    d_k = q.shape[1]
    s = q @ k.T / np.sqrt(d_k)
    s = np.where(m, s, -np.inf)
    s = s - s.max(axis=1, keepdims=True)
    p = np.exp(s)
    p = p / p.sum(axis=1, keepdims=True)
    dv = p.T @ do
    dp = do @ v.T
    ds = p * (dp - (dp * p).sum(axis=1, keepdims=True))
    dq = ds @ k / np.sqrt(d_k)
    dk = ds.T @ q / np.sqrt(d_k)
    return dq, dk, dv


def attention_backward(Q, K, V, dO, mask=None):
    n_q, d_k = Q.shape[-2:]
    n_k = K.shape[-2]
    d_v = V.shape[-1]
    batch = Q.shape[:-2]
    if mask is None:
        mask = np.ones((n_q, n_k), dtype=bool)
    mask = np.broadcast_to(mask, batch + (n_q, n_k)).reshape(-1, n_q, n_k)
    q = Q.reshape(-1, n_q, d_k)
    k = K.reshape(-1, n_k, d_k)
    v = V.reshape(-1, n_k, d_v)
    do = dO.reshape(-1, n_q, d_v)
    dQ = np.zeros(q.shape)
    dK = np.zeros(k.shape)
    dV = np.zeros(v.shape)
    for b in range(q.shape[0]):
        dQ[b], dK[b], dV[b] = _single(q[b], k[b], v[b], do[b], mask[b])
    return dQ.reshape(Q.shape), dK.reshape(K.shape), dV.reshape(V.shape)
