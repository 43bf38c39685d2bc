import numpy as np


def softmax(x, axis=-1):
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.normal(0, 1, (n, d_k))
    K = rng.normal(0, 1, (n, d_k))
    raw = np.einsum("qd,kd->qk", Q, K)
    scaled = raw / d_k**0.5
    p_raw = softmax(raw)
    p_scaled = softmax(scaled)
    return raw.max(), scaled.max(), p_raw[0].max(), p_scaled[0].max()
