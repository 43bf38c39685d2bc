import numpy as np

# Step by step, as in the blog post: scores, scale, softmax, weighted sum.
print("Scaled dot-product attention demo")


def attention(Q, K, V, mask=None):
    print("Q:", Q.shape, "K:", K.shape, "V:", V.shape)

    # Step 1: raw scores
    scores = np.matmul(Q, K.T)
    print("scores:", scores.shape)

    # Step 2: scale by sqrt(d_k)
    d_k = Q.shape[-1]
    scores = scores / np.sqrt(d_k)

    # Step 3: mask (True = keep)
    if mask is not None:
        scores = np.where(mask, scores, float("-inf"))

    # Step 4: softmax over the keys
    exp_scores = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    weights = exp_scores / np.sum(exp_scores, axis=-1, keepdims=True)
    print("weights rows sum to", weights.sum(axis=-1)[:2])

    # Step 5: weighted sum of the values
    return np.matmul(weights, V)
