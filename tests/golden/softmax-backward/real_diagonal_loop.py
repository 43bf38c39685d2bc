import numpy as np


def softmax_backward(p, g):
    # derivative of softmax is s * (1 - s)
    grad = np.empty_like(p)
    flat_p = p.reshape(-1)
    flat_g = g.reshape(-1)
    out = grad.reshape(-1)
    for i in range(flat_p.size):
        out[i] = flat_p[i] * (1.0 - flat_p[i]) * flat_g[i]
    return grad
