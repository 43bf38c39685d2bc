import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = Q @ K.T

    def top(row):
        e = np.exp(row - row.max())
        return (e / e.sum()).max()

    return raw.max(), scaled.max(), top(raw[0]), top(scaled[0])
