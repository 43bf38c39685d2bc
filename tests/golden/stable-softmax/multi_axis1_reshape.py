import numpy as np


def softmax(x, axis=-1):
    x = x - x.max(axis=1).reshape(-1, 1)
    e = np.exp(x)
    return e / e.sum(axis=1).reshape(-1, 1)
