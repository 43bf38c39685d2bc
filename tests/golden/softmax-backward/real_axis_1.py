import numpy as np


def softmax_backward(p, g):
    # sum over each row
    dot = np.sum(p * g, axis=1, keepdims=True)
    return p * (g - dot)
