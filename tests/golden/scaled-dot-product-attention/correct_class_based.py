import numpy as np


class Attention:
    """softmax(Q K^T / sqrt(d_k)) V over the last two axes, any batch shape."""

    def scores(self, Q, K):
        return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])

    def softmax(self, s):
        s = s - s.max(axis=-1, keepdims=True)
        e = np.exp(s)
        return e / e.sum(axis=-1, keepdims=True)

    def __call__(self, Q, K, V, mask=None):
        s = self.scores(Q, K)
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        return self.softmax(s) @ V


def attention(Q, K, V, mask=None):
    return Attention()(Q, K, V, mask)
