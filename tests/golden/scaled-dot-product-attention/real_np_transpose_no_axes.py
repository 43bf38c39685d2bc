import numpy as np


def attention(Q, K, V, mask=None):
    dk = Q.shape[-1]
    logits = Q @ np.transpose(K) / np.sqrt(dk)
    if mask is not None:
        logits = np.where(mask, logits, -np.inf)
    logits = logits - logits.max(axis=-1, keepdims=True)
    probs = np.exp(logits)
    probs = probs / probs.sum(axis=-1, keepdims=True)
    return probs @ V
