import numpy as np


def softmax(x):
    return np.exp(x) / np.sum(np.exp(x))


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    S = Q @ K.T
    S_scaled = S / np.sqrt(d_k)
    return S.max(), S_scaled.max(), softmax(S[0]).max(), softmax(S_scaled[0]).max()
