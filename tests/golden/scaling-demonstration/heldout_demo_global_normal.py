import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    np.random.seed(rng_seed)
    Q = np.random.normal(size=(n, d_k))
    K = np.random.normal(size=(n, d_k))
    S = Q @ K.T
    Ss = S / np.sqrt(d_k)
    e = np.exp(S[0] - S[0].max())
    es = np.exp(Ss[0] - Ss[0].max())
    return S.max(), Ss.max(), (e / e.sum()).max(), (es / es.sum()).max()
