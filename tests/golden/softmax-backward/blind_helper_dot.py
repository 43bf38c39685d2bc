import numpy as np


def _weighted_mean(p, g):
    """sum_j p_j g_j along the last axis, kept as a trailing axis of size 1."""
    return (p * g).sum(axis=-1)[..., None]


def softmax_backward(p, g):
    p = np.asarray(p)
    g = np.asarray(g)
    return p * g - p * _weighted_mean(p, g)
