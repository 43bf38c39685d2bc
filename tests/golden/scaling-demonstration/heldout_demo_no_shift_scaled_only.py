import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    S = Q @ K.T
    S_div = S / np.sqrt(d_k)
    raw_w = np.exp(S[0]) / np.sum(np.exp(S[0]))
    div_w = np.exp(S_div[0]) / np.sum(np.exp(S_div[0]))
    return S.max(), S_div.max(), raw_w.max(), div_w.max()
