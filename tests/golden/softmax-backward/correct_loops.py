import numpy as np


def softmax_backward(p, g):
    out = np.zeros_like(p, dtype=float)
    for idx in np.ndindex(p.shape[:-1]):
        row = p[idx]
        grad_row = g[idx]
        n = len(row)
        for i in range(n):
            total = 0.0
            for j in range(n):
                if i == j:
                    total += row[i] * (1 - row[j]) * grad_row[j]
                else:
                    total += -row[i] * row[j] * grad_row[j]
            out[idx + (i,)] = total
    return out
