import numpy as np


def _softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    S = Q @ K.T
    scaled = S / np.sqrt(d_k)
    return (
        float(S.max()),
        float(scaled.max()),
        float(_softmax(S[0]).max()),
        float(_softmax(scaled[0]).max()),
    )
