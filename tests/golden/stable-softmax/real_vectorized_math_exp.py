import math

import numpy as np

_exp = np.vectorize(math.exp)


def softmax(x, axis=-1):
    e = _exp(np.asarray(x, dtype=float))
    return e / e.sum(axis=axis, keepdims=True)
