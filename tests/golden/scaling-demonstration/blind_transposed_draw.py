import numpy as np


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / e.sum()


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    # keep vectors as columns, like in the notes
    Q = rng.standard_normal((d_k, n)).T
    K = rng.standard_normal((d_k, n)).T
    S = Q @ K.T
    S_scaled = S / np.sqrt(d_k)
    return S.max(), S_scaled.max(), softmax(S[0]).max(), softmax(S_scaled[0]).max()
