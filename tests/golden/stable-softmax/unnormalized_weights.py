import numpy as np


def softmax(x, axis=-1):
    return np.exp(x - np.max(x, axis=axis, keepdims=True))
