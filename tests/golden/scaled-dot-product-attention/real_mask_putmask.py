import numpy as np


class ScaledDotProductAttention:
    def __init__(self, fill=-np.inf):
        self.fill = fill

    def __call__(self, Q, K, V, mask=None):
        scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(K.shape[-1])
        if mask is not None:
            np.putmask(scores, np.logical_not(mask), self.fill)
        scores -= scores.max(axis=-1, keepdims=True)
        w = np.exp(scores)
        w /= w.sum(axis=-1, keepdims=True)
        return np.einsum("...qk,...kd->...qd", w, V)


def attention(Q, K, V, mask=None):
    return ScaledDotProductAttention()(Q, K, V, mask)
