import numpy as np


def attention(Q, K, V, mask=None):
    # Flatten any batch dimensions so everything is a plain matrix.
    out_shape = Q.shape[:-1] + (V.shape[-1],)
    q = Q.reshape(-1, Q.shape[-1])
    k = K.reshape(-1, K.shape[-1])
    v = V.reshape(-1, V.shape[-1])
    scores = q @ k.T / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return (w @ v).reshape(out_shape)
