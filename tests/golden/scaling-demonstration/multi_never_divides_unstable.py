import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    s = Q @ K.T
    w = np.exp(s[0]) / np.exp(s[0]).sum()
    return s.max(), s.max(), w.max(), w.max()
