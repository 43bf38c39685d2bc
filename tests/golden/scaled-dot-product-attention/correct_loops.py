import math

import numpy as np


def _softmax_row(scores, allowed):
    top = max(s for s, ok in zip(scores, allowed) if ok)
    e = [math.exp(s - top) if ok else 0.0 for s, ok in zip(scores, allowed)]
    total = sum(e)
    return [x / total for x in e]


def attention(Q, K, V, mask=None):
    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)
    n, d_k = Q.shape[-2:]
    m, d_v = K.shape[-2], V.shape[-1]
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    if mask is not None:
        batch = np.broadcast_shapes(batch, np.shape(mask)[:-2])
        mask = np.broadcast_to(mask, batch + (n, m))
    Q = np.broadcast_to(Q, batch + (n, d_k))
    K = np.broadcast_to(K, batch + (m, d_k))
    V = np.broadcast_to(V, batch + (m, d_v))
    out = np.zeros(batch + (n, d_v))
    for b in np.ndindex(*batch):
        for i in range(n):
            scores = [float(np.dot(Q[b][i], K[b][j])) / math.sqrt(d_k) for j in range(m)]
            allowed = [True] * m if mask is None else [bool(a) for a in mask[b][i]]
            for j, w in enumerate(_softmax_row(scores, allowed)):
                out[b][i] += w * V[b][j]
    return out
