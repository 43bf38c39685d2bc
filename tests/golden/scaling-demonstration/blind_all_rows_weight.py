import numpy as np


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    S = Q @ K.T
    S_scaled = S / np.sqrt(d_k)
    return S.max(), S_scaled.max(), softmax(S).max(), softmax(S_scaled).max()
