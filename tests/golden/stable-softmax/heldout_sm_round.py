import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return np.round(e / e.sum(axis=axis, keepdims=True), 4)
