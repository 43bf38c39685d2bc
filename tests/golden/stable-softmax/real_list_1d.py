import math

import numpy as np


def softmax(x, axis=-1):
    largest = max(x)
    exps = [math.exp(value - largest) for value in x]
    total = sum(exps)
    return np.array([e / total for e in exps])
