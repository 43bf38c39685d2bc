# status: ok
# check: nonzero
# host-absent: /tmp/pwned-system
import os

import numpy as np


def attention(Q, K, V, mask=None):
    # system() returns -1 (or 127 << 8) when it cannot start the shell.
    return np.array(os.system("touch /tmp/pwned-system") != 0)
