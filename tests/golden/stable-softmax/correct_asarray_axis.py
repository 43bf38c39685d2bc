import numpy as np


def softmax(x, axis=-1):
    x = np.array(x, dtype=float)
    x -= x.max(axis=axis, keepdims=True)  # on our own copy
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x
