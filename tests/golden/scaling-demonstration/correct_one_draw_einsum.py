import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    # both matrices in a single draw: the first (n, d_k) block is Q, the second K
    Q, K = np.random.default_rng(rng_seed).normal(0.0, 1.0, size=(2, n, d_k))
    S = np.einsum("qd,kd->qk", Q, K)
    S_scaled = S * (1.0 / np.sqrt(d_k))
    out = []
    for s in (S, S_scaled):
        z = s[0] - np.max(s[0])
        w = np.exp(z) / np.sum(np.exp(z))
        out.append(float(w.max()))
    return float(S.max()), float(S_scaled.max()), out[0], out[1]
