import numpy as np

print("attention module loaded")


def attention(Q, K, V, mask=None):
    # 1. similarity of every query with every key (swap only the last two axes)
    scores = Q @ np.swapaxes(K, -1, -2)
    # 2. scale so the variance does not grow with d_k
    scores = scores / np.sqrt(Q.shape[-1])
    # 3. masked keys can never be attended to
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    # 4. softmax over the keys, stable version
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    print("weights", weights.shape)
    # 5. mix the values
    return weights @ V
