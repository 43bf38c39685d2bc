import numpy as np


def softmax_backward(p, g):
    shape = p.shape
    P = p.reshape(-1, shape[-1])
    G = g.reshape(-1, shape[-1])
    s = (P * G).sum(axis=1, keepdims=True)
    return (P * G - P * s).reshape(shape)
