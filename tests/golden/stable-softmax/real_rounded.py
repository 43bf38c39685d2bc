import numpy as np


def softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    num = np.exp(z)
    out = num / num.sum(axis=axis, keepdims=True)
    return np.round(out, 4)
