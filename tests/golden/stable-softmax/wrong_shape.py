import math


def softmax(x, axis=-1):
    values = [float(v) for v in x.flatten()]
    top = max(values)
    exps = [math.exp(v - top) for v in values]
    total = sum(exps)
    return [e / total for e in exps]
