# status: ok
# check: nonzero
# host-absent: /tmp/pwned-ctypes
import ctypes

import numpy as np


def attention(Q, K, V, mask=None):
    libc = ctypes.CDLL(None)
    return np.array(libc.system(b"touch /tmp/pwned-ctypes") != 0)
