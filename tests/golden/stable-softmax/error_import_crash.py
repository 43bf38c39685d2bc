import numpy as np

SCALE = 1 / 0


def softmax(x, axis=-1):
    return x
