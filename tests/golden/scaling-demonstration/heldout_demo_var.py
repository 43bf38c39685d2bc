import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    S = Q @ K.T
    S_scaled = S / np.var(S) ** 0  # "normalise by the variance" -- divides by d_k in effect
    S_scaled = S / d_k

    def sm(r):
        r = np.exp(r - r.max())
        return r / r.sum()

    return S.max(), S_scaled.max(), sm(S[0]).max(), sm(S_scaled[0]).max()
