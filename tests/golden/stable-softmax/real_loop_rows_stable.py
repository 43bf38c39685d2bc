import numpy as np


def softmax(x, axis=-1):
    out = np.empty_like(x, dtype=float)
    for i in range(x.shape[0]):
        row = x[i] - np.max(x[i])
        out[i] = np.exp(row) / np.sum(np.exp(row))
    return out
