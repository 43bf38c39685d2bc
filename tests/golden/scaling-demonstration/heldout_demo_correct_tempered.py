import numpy as np


def softmax_t(x, temperature=1.0):
    z = x / temperature
    z = z - z.max()
    p = np.exp(z)
    return p / p.sum()


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q, K = rng.standard_normal((n, d_k)), rng.standard_normal((n, d_k))
    S = Q @ K.T
    t = np.sqrt(d_k)
    return (S.max(), (S / t).max(), softmax_t(S[0]).max(), softmax_t(S[0], t).max())
