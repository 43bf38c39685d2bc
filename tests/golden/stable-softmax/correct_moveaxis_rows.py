import numpy as np


def softmax(x, axis=-1):
    moved = np.moveaxis(np.asarray(x, dtype=float), axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    out = np.empty_like(rows)
    for i, row in enumerate(rows):
        e = np.exp(row - row.max())
        out[i] = e / e.sum()
    return np.moveaxis(out.reshape(moved.shape), -1, axis)
