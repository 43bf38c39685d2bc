# Demo: why we divide by sqrt(d_k) before the softmax
import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    rng = np.random.default_rng(rng_seed)

    # queries and keys with unit-variance entries
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))

    # each score is a sum of d_k products, so its variance is d_k
    scores = np.matmul(Q, K.transpose())
    scaled_scores = scores / np.sqrt(d_k)
    # print("raw std", scores.std(), "scaled std", scaled_scores.std())

    def top_weight(row):
        # the largest weight is exp(0) / sum(exp(row - max))
        shifted = row - np.max(row)
        return 1.0 / np.sum(np.exp(shifted))

    raw_top = top_weight(scores[0])
    scaled_top = top_weight(scaled_scores[0])
    # print(f"d_k={d_k}: top weight {raw_top:.3f} -> {scaled_top:.3f}")
    return scores.max(), scaled_scores.max(), raw_top, scaled_top
