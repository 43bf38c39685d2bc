import math

import numpy as np


def _softmax_1d(row):
    exps = [math.exp(v) for v in row]
    total = sum(exps)
    return [e / total for e in exps]


def softmax(x, axis=-1):
    return np.apply_along_axis(_softmax_1d, axis, x)
