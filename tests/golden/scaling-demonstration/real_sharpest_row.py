import numpy as np


def stable_softmax(x, axis=-1):
    x = x - np.max(x, axis=axis, keepdims=True)
    return np.exp(x) / np.sum(np.exp(x), axis=axis, keepdims=True)


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    unscaled = Q @ K.T
    scaled = unscaled / np.sqrt(d_k)
    # weights of every query, then the top weight of the sharpest row
    w_unscaled = stable_softmax(unscaled)
    w_scaled = stable_softmax(scaled)
    return unscaled.max(), scaled.max(), w_unscaled.max(), w_scaled.max()
