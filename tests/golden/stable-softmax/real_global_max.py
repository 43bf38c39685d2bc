import numpy as np


def softmax(x, axis=-1):
    # shift by the maximum so exp never overflows
    shifted = x - np.max(x)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)
