import math

import numpy as np


def _softmax_1d(v):
    top = max(v)
    exps = [math.exp(t - top) for t in v]
    total = math.fsum(exps)
    return [e / total for e in exps]


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    return np.apply_along_axis(_softmax_1d, axis, x)
