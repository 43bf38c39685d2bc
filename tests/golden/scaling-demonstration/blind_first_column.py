import numpy as np


def softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    S = Q @ K.T
    S_scaled = S / np.sqrt(d_k)
    P = softmax(S, axis=0)
    P_scaled = softmax(S_scaled, axis=0)
    return S.max(), S_scaled.max(), P[:, 0].max(), P_scaled[:, 0].max()
