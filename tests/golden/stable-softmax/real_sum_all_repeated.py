import numpy as np


def softmax(x, axis=-1):
    return np.exp(x - np.max(x, axis=axis, keepdims=True)) / np.sum(
        np.exp(x - np.max(x, axis=axis, keepdims=True))
    )
