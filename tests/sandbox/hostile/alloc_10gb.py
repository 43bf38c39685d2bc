# status: memory-limit
# limits: wall=10 cpu=5 memory=256
import numpy as np


def attention(Q, K, V, mask=None):
    big = np.ones(10 * 2**30 // 8)
    return big[:1]
