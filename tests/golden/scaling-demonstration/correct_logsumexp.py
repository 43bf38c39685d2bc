import math

import numpy as np


def log_softmax(x):
    m = np.max(x)
    return x - (m + np.log(np.sum(np.exp(x - m))))


def scaling_demo(d_k, rng_seed, n=16):
    gen = np.random.default_rng(seed=rng_seed)
    queries = gen.standard_normal(size=(n, d_k))
    keys = gen.standard_normal(size=(n, d_k))
    scores = queries @ keys.T
    scaled = scores / math.sqrt(d_k)
    p_raw = np.exp(log_softmax(scores[0]))
    p_scaled = np.exp(log_softmax(scaled[0]))
    return (scores.max(), scaled.max(), p_raw.max(), p_scaled.max())
