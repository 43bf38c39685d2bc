import math

import numpy as np


def softmax(x, axis=-1):
    result = []
    for row in x:
        exps = [math.exp(v) for v in row]
        s = sum(exps)
        result.append([e / s for e in exps])
    return np.array(result)
