import numpy as np


def softmax_backward(p, g):
    # Jacobian of softmax is diagonal: ds_i/dz_i = s_i(1 - s_i)
    jac_diag = p * (1.0 - p)
    return jac_diag * g
