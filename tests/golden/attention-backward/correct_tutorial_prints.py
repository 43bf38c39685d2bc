import numpy as np

# Step by step, printing shapes as we go (the way the tutorial did it).


def attention_backward(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    print("Q", Q.shape, "K", K.shape, "V", V.shape)
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(d_k)
    if mask is not None:
        scores[..., :, :] = np.where(mask, scores, -np.inf)
    probs = np.exp(scores - np.amax(scores, axis=-1, keepdims=True))
    probs = probs / probs.sum(axis=-1, keepdims=True)
    print("attention weights", probs.shape)
    grad_V = np.matmul(np.swapaxes(probs, -1, -2), dO)
    grad_probs = np.matmul(dO, np.swapaxes(V, -1, -2))
    inner = (grad_probs * probs).sum(axis=-1, keepdims=True)
    grad_scores = probs * (grad_probs - inner)
    grad_Q = np.matmul(grad_scores, K) / np.sqrt(d_k)
    grad_K = np.matmul(np.swapaxes(grad_scores, -1, -2), Q) / np.sqrt(d_k)
    print("done")
    return grad_Q, grad_K, grad_V
