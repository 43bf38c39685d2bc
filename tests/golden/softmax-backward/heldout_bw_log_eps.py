import numpy as np


def softmax_backward(p, g):
    # recover logits safely then recompute softmax
    logits = np.log(p + 1e-12)
    logits = logits - logits.max(axis=-1, keepdims=True)
    q = np.exp(logits)
    q = q / q.sum(axis=-1, keepdims=True)
    return q * (g - (q * g).sum(axis=-1, keepdims=True))
