import math

import numpy as np


def _one(q, k, v, do, m):
    n, d = q.shape
    nk = k.shape[0]
    s = np.zeros((n, nk))
    for i in range(n):
        for j in range(nk):
            s[i, j] = sum(q[i, t] * k[j, t] for t in range(d)) / math.sqrt(d)
            if m is not None and not m[i, j]:
                s[i, j] = -math.inf
    p = np.zeros_like(s)
    for i in range(n):
        top = max(s[i])
        e = [math.exp(x - top) for x in s[i]]
        p[i] = [x / sum(e) for x in e]
    dq, dk, dv = np.zeros(q.shape), np.zeros(k.shape), np.zeros(v.shape)
    for i in range(n):
        dp = [float(np.dot(do[i], v[j])) for j in range(nk)]
        mean = sum(p[i, j] * dp[j] for j in range(nk))
        for j in range(nk):
            ds = p[i, j] * (dp[j] - mean)
            dq[i] += ds * k[j] / math.sqrt(d)
            dk[j] += ds * q[i] / math.sqrt(d)
            dv[j] += p[i, j] * do[i]
    return dq, dk, dv


def attention_backward(Q, K, V, dO, mask=None):
    Q, K, V, dO = (np.asarray(a, dtype=float) for a in (Q, K, V, dO))
    lead = Q.shape[:-2]
    full = None if mask is None else np.broadcast_to(mask, lead + (Q.shape[-2], K.shape[-2]))
    dQ, dK, dV = np.zeros(Q.shape), np.zeros(K.shape), np.zeros(V.shape)
    for idx in np.ndindex(*lead):
        m = None if full is None else full[idx]
        dQ[idx], dK[idx], dV[idx] = _one(Q[idx], K[idx], V[idx], dO[idx], m)
    return dQ, dK, dV
