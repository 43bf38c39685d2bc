import numpy as np


def softmax_backward(p, g):
    g *= p * (1 - p)
    return g
