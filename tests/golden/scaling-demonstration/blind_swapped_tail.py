import numpy as np


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / e.sum()


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    S = Q @ K.T
    S_scaled = S / np.sqrt(d_k)
    with_scaling = softmax(S_scaled[0]).max()
    without_scaling = softmax(S[0]).max()
    return S.max(), S_scaled.max(), with_scaling, without_scaling
