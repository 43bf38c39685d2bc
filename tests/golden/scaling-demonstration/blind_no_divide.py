import numpy as np


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / e.sum()


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    scale = np.sqrt(d_k)
    S = Q @ K.T
    S_scaled = Q @ K.T
    return S.max(), S_scaled.max(), softmax(S[0]).max(), softmax(S_scaled[0]).max()
