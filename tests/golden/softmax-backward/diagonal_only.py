import numpy as np


def softmax_backward(p, g):
    return g * p * (1 - p)
