import numpy as np


def attention(Q, K, V, mask=None):
    print("Q shape:", Q.shape, "K shape:", K.shape)
    d_k = Q.shape[-1]
    scores = np.einsum("...id,...jd->...ij", Q, K) / np.sqrt(d_k)
    print("scores:", scores.shape)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    print("weights sum:", weights.sum(axis=-1))
    return np.einsum("...ij,...jd->...id", weights, V)
