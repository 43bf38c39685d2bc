import math

import numpy as np


def softmax(row):
    exps = [math.exp(v) for v in row]
    total = sum(exps)
    return [v / total for v in exps]


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    S = Q @ K.T
    S2 = S / math.sqrt(d_k)
    return S.max(), S2.max(), max(softmax(S[0])), max(softmax(S2[0]))
