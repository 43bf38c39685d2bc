import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    np.random.seed(rng_seed)
    Q = np.random.randn(n, d_k)
    K = np.random.randn(n, d_k)
    S = Q @ K.T
    S_scaled = S / d_k
    row = S[0] - S[0].max()
    row_scaled = S_scaled[0] - S_scaled[0].max()
    w = np.exp(row) / np.exp(row).sum()
    w_scaled = np.exp(row_scaled) / np.exp(row_scaled).sum()
    return S.max(), S_scaled.max(), w.max(), w_scaled.max()
