import numpy as np


def softmax_backward(p, g):
    n = p.shape[-1]
    rows_p = p.reshape(-1, n).tolist()
    rows_g = g.reshape(-1, n).tolist()
    result = []
    for pr, gr in zip(rows_p, rows_g):
        s = sum(a * b for a, b in zip(pr, gr))
        result.append([a * (b - s) for a, b in zip(pr, gr)])
    return np.array(result).reshape(p.shape)
