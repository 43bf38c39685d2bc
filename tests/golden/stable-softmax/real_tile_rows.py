import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        exps = np.exp(x - np.max(x))
        return exps / np.sum(exps)
    if axis == 0:
        return softmax(x.T).T
    # one row per example: repeat each row's max (and sum) across its columns
    row_max = np.tile(np.max(x, axis=1), (x.shape[1], 1)).T
    exps = np.exp(x - row_max)
    row_sum = np.tile(np.sum(exps, axis=1), (x.shape[1], 1)).T
    return exps / row_sum
