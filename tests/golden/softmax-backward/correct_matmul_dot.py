import numpy as np


def softmax_backward(p, g):
    dot = g[..., None, :] @ p[..., :, None]  # (..., 1, 1)
    return p * g - p * dot[..., 0]
