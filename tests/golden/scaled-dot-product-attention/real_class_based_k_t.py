import numpy as np


class ScaledDotProductAttention:
    def __init__(self, temperature):
        self.temperature = temperature

    def softmax(self, x):
        x = x - np.max(x, axis=-1, keepdims=True)
        return np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)

    def __call__(self, q, k, v, mask=None):
        attn = np.matmul(q / self.temperature, k.T)
        if mask is not None:
            attn = np.where(mask, attn, -1e9)
        attn = self.softmax(attn)
        return np.matmul(attn, v)


def attention(Q, K, V, mask=None):
    return ScaledDotProductAttention(temperature=Q.shape[-1] ** 0.5)(Q, K, V, mask)
