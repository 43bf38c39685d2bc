import numpy as np


def softmax_backward(p, g):
    # the gradient of softmax is its Jacobian
    return p[..., :, None] * (np.eye(p.shape[-1]) - p[..., None, :])
