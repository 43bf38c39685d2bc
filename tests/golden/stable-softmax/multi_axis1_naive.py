import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=1, keepdims=True)
