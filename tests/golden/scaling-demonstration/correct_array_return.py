import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    q = rng.standard_normal((n, d_k))
    k = rng.standard_normal((n, d_k))
    results = []
    for divisor in (1.0, np.sqrt(d_k)):
        s = q @ k.T / divisor
        results.append(s.max())
    tops = []
    for divisor in (1.0, np.sqrt(d_k)):
        row = q[0] @ k.T / divisor
        e = np.exp(row - row.max())
        tops.append(e.max() / e.sum())
    return np.array(results + tops)
