import numpy as np


def softmax_backward(p, g):
    s = np.sum(p * g, axis=-1, keepdims=True)
    grad = p * g
    grad += p * s
    return grad
