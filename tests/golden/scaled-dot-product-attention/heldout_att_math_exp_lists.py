import math

import numpy as np


def attention(Q, K, V, mask=None):
    n = len(Q)
    m = len(K)
    d_k = len(Q[0])
    out = []
    for i in range(n):
        row = []
        for j in range(m):
            s = sum(Q[i][t] * K[j][t] for t in range(d_k)) / math.sqrt(d_k)
            if mask is not None and not mask[i][j]:
                row.append(0.0)
            else:
                row.append(math.exp(s))
        total = sum(row)
        weights = [r / total for r in row]
        out.append([sum(weights[j] * V[j][c] for j in range(m)) for c in range(len(V[0]))])
    return np.array(out)
