import numpy as np


def softmax_backward(p, g):
    n_rows, n = p.shape
    out = np.zeros_like(p)
    for i in range(n_rows):
        out[i, :] = g[i, :] * p[i, :] * (1 - p[i, :])
    return out
