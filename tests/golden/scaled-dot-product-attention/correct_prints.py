import numpy as np

print("loading my attention")


def attention(Q, K, V, mask=None):
    print("shapes", Q.shape, K.shape, V.shape)
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    return w / w.sum(-1, keepdims=True) @ V
