import math


def softmax(x, axis=-1):
    exps = [math.exp(v) for v in x]
    s = sum(exps)
    return [e / s for e in exps]
