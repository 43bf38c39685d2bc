import numpy as np


def softmax(x, axis=-1):
    x = x.astype(np.float32)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
