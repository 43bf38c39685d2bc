import numpy as np


def softmax(x, axis=-1):
    log_norm = np.logaddexp.reduce(x, axis=axis, keepdims=True)
    return np.exp(x - log_norm)
