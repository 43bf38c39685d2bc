import numpy as np


def attention(Q, K, V, mask=None):
    n, d_k = Q.shape
    m = K.shape[0]
    out = np.zeros((n, V.shape[1]))
    for i in range(n):
        row = np.zeros(m)
        for j in range(m):
            row[j] = np.dot(Q[i], K[j]) / np.sqrt(d_k)
        if mask is not None:
            row[~mask[i]] = -np.inf
        row = np.exp(row - row.max())
        row = row / row.sum()
        for j in range(m):
            out[i] += row[j] * V[j]
    return out
