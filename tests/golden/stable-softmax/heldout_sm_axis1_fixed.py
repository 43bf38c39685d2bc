import numpy as np


def softmax(x, axis=-1):
    x_max = np.amax(x, axis=1, keepdims=True)
    e = np.exp(x - x_max)
    return e / np.sum(e, axis=1, keepdims=True)
