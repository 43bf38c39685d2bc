# status: ok
# check: zeros
# host-absent: /tmp/pwned-tmp /dev/shm/pwned-tmp /var/tmp/pwned-tmp /tmp/pwned-dir
import os

import numpy as np


def attention(Q, K, V, mask=None):
    wrote = 0
    for path in ("/tmp/pwned-tmp", "/dev/shm/pwned-tmp", "/var/tmp/pwned-tmp"):
        try:
            with open(path, "w") as f:
                f.write("x")
            wrote += 1
        except OSError:
            pass
    try:
        os.mkdir("/tmp/pwned-dir")
        wrote += 1
    except OSError:
        pass
    return np.array(wrote)
