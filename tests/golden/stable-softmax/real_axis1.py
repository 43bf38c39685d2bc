import numpy as np


def softmax(x, axis=-1):
    # subtract the row max for stability
    x_max = np.max(x, axis=1, keepdims=True)
    e_x = np.exp(x - x_max)
    return e_x / np.sum(e_x, axis=1, keepdims=True)
