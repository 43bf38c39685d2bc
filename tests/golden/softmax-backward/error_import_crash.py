import numpy as np

N = np.zeros(3)[5]


def softmax_backward(p, g):
    return p
