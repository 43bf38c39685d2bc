# status: ok
# check: at-most=32
# limits: wall=10 cpu=5
import threading
import time

import numpy as np

stop = threading.Event()


def attention(Q, K, V, mask=None):
    started = 0
    for _ in range(1000):
        try:
            threading.Thread(target=stop.wait, daemon=True).start()
        except (RuntimeError, MemoryError, OSError):
            break
        started += 1
    return np.array(started)
