import numpy as np

print("softmax: exp(x_i) / sum_j exp(x_j)")


def softmax(x, axis=-1):
    print("input shape", np.shape(x), "axis", axis)
    numerator = np.exp(x)
    denominator = np.sum(numerator, axis=axis, keepdims=True)
    return numerator / denominator
