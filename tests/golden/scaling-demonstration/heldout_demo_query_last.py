import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    S = Q @ K.T
    q = n - 1  # "one row": the last query
    out = [S.max(), (S / np.sqrt(d_k)).max()]
    for s in (S[q], S[q] / np.sqrt(d_k)):
        w = np.exp(s - s.max())
        out.append((w / w.sum()).max())
    return tuple(out)
