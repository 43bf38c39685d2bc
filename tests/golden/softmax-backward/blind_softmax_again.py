import numpy as np


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def softmax_backward(p, g):
    y = softmax(p)
    return y * (g - np.sum(g * y, axis=-1, keepdims=True))
