import numpy as np

SCALE = 1 / np.sqrt(np.zeros(2)[3])


def attention_backward(Q, K, V, dO, mask=None):
    return Q, K, V
