import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x)
    p = e / np.sum(e, axis=axis, keepdims=True)
    return np.around(p, decimals=4)
