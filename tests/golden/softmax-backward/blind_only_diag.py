import numpy as np


def softmax_backward(p, g):
    # derivative of softmax: s * (1 - s)
    return p * (1 - p) * g
