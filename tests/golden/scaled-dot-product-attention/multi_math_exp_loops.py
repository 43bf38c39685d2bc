import math

import numpy as np


def softmax(values):
    exps = [math.exp(v) for v in values]
    total = sum(exps)
    return [e / total for e in exps]


def attention(Q, K, V, mask=None):
    n, d_k = Q.shape
    m, d_v = V.shape
    out = np.zeros((n, d_v))
    for i in range(n):
        scores = []
        for j in range(m):
            s = sum(Q[i][t] * K[j][t] for t in range(d_k)) / math.sqrt(d_k)
            if mask is not None and not mask[i][j]:
                s = -1e30
            scores.append(s)
        weights = softmax(scores)
        for j in range(m):
            out[i] += weights[j] * V[j]
    return out
