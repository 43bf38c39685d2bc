import math

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    moved = np.moveaxis(x, axis, -1)
    out = np.empty_like(moved)
    for index in np.ndindex(*moved.shape[:-1]):
        row = moved[index]
        top = max(row)
        exps = [math.exp(v - top) for v in row]
        total = sum(exps)
        out[index] = [e / total for e in exps]
    return np.moveaxis(out, -1, axis)
