import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    scores = Q @ K.T
    scaled = scores / np.sqrt(d_k)
    # softmax "over the keys": but axis=0 runs down the queries
    w = np.exp(scores - scores.max(axis=0)) / np.exp(scores - scores.max(axis=0)).sum(axis=0)
    ws = np.exp(scaled - scaled.max(axis=0)) / np.exp(scaled - scaled.max(axis=0)).sum(axis=0)
    return scores.max(), scaled.max(), w[0].max(), ws[0].max()
