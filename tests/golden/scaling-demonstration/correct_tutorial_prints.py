import numpy as np

print("ten minute demo: why divide by sqrt(d_k)")


def softmax(v):
    v = v - v.max()
    ev = np.exp(v)
    return ev / ev.sum()


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    scores = np.dot(Q, K.T)
    print("raw score range:", scores.min(), scores.max())
    scaled_scores = scores / d_k**0.5
    print("scaled score range:", scaled_scores.min(), scaled_scores.max())
    w_raw = softmax(scores[0])
    w_scaled = softmax(scaled_scores[0])
    print("top weight without / with the division:", w_raw.max(), w_scaled.max())
    return scores.max(), scaled_scores.max(), w_raw.max(), w_scaled.max()
