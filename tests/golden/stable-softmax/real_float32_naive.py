import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float32)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
