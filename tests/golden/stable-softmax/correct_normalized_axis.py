import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    axis = axis % x.ndim
    shift = x.max(axis=axis, keepdims=True)
    e = np.exp(x - shift)
    return e / e.sum(axis=axis, keepdims=True)
