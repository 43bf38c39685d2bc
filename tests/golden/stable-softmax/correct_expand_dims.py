import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    m = np.expand_dims(np.max(x, axis=axis), axis)
    e = np.exp(x - m)
    s = np.expand_dims(np.sum(e, axis=axis), axis)
    return e / s
