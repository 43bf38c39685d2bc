import numpy as np


def softmax_backward(p, g):
    n = p.shape[-1]
    diag = p[..., :, None] * np.eye(n)
    outer = p[..., :, None] * p[..., None, :]
    J = diag + outer
    return np.einsum("...ij,...j->...i", J, g)
