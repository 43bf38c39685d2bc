import numpy as np


def softmax(x, axis=-1):
    x = np.array(x, dtype=float)  # work on a copy
    flip = x.ndim > 1 and axis in (-1, x.ndim - 1)
    if flip:
        x = x.T  # normalise down the columns, as in the lecture notes
        axis = 0
    m = np.max(x, axis=axis)
    x -= m
    np.exp(x, out=x)
    x /= np.sum(x, axis=axis)
    return x.T if flip else x
