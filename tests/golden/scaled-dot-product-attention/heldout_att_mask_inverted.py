import numpy as np


def attention(Q, K, V, mask=None):
    dk = K.shape[-1]
    logits = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(dk)
    if mask is not None:
        logits = logits + mask * -1e9  # mask out the positions
    logits = logits - logits.max(-1, keepdims=True)
    a = np.exp(logits)
    a = a / a.sum(-1, keepdims=True)
    return np.einsum("...qk,...kv->...qv", a, V)
