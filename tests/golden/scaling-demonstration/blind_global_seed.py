import numpy as np


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / e.sum()


def scaling_demo(d_k, rng_seed, n=16):
    np.random.seed(rng_seed)
    Q = np.random.randn(n, d_k)
    K = np.random.randn(n, d_k)
    S = Q @ K.T
    S_scaled = S / np.sqrt(d_k)
    return S.max(), S_scaled.max(), softmax(S[0]).max(), softmax(S_scaled[0]).max()
