import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)

    def top(s):
        e = np.exp(s - s.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).max()

    return raw.max(), scaled.max(), top(raw), top(scaled)
