import numpy as np


def mha(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    return X
