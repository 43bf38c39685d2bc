import numpy as np


def softmax_backward(p, g):
    s = np.exp(p) / np.sum(np.exp(p), axis=-1, keepdims=True)
    return s * (g - np.sum(g * s, axis=-1, keepdims=True))
