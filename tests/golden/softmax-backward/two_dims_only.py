import numpy as np


def softmax_backward(p, g):
    rows, cols = p.shape
    out = np.zeros((rows, cols))
    for r in range(rows):
        out[r] = p[r] * (g[r] - np.dot(g[r], p[r]))
    return out
