import numpy as np


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def attention(Q, K, V, mask=None):
    # loop over the batch
    out = []
    for b in range(Q.shape[0]):
        s = Q[b] @ K[b].T / np.sqrt(Q.shape[-1])
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        out.append(softmax(s) @ V[b])
    return np.array(out)
