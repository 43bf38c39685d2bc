import numpy as np


def softmax(x, axis=-1):
    log_z = np.log(np.sum(np.exp(x), axis=axis, keepdims=True))
    return np.exp(x - log_z)
