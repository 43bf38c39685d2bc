# status: ok
# check: zeros
# limits: wall=5 cpu=2
import os
import numpy as np


def attention(Q, K, V, mask=None):
    forked = 0
    for _ in range(100):
        try:
            pid = os.fork()
        except OSError:
            continue
        if pid == 0:
            os._exit(0)
        forked += 1
    return np.array(forked)
