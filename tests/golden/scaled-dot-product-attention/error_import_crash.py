import numpy as np

WEIGHTS = np.load("weights.npy")  # no files in the sandbox


def attention(Q, K, V, mask=None):
    return Q
