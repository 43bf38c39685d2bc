import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    scores = Q @ K.T
    scaled = scores / np.sqrt(d_k)
    row = scores[0]
    w = np.exp(row - row.max())
    w /= w.sum()
    # copy-paste: the "scaled" weights are computed from the raw row again
    row_s = scores[0]
    ws = np.exp(row_s - row_s.max())
    ws /= ws.sum()
    return scores.max(), scaled.max(), w.max(), ws.max()
