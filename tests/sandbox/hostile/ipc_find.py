# status: ok
# check: zeros
# Graded right after ipc_leave.py on the same worker: returns how many of the objects that one
# tried to leave it can find. An earlier run's IPC object must never reach a later run.
import ctypes
import os

import numpy as np

KEY = 0x5EED


def attention(Q, K, V, mask=None):
    libc = ctypes.CDLL(None, use_errno=True)
    found = 0
    if libc.shmget(KEY, 0, 0) >= 0:
        found += 1
    if libc.msgget(KEY, 0) >= 0:
        found += 1
    if libc.semget(KEY, 0, 0) >= 0:
        found += 1
    try:
        if libc.mq_open(b"/sandbox-probe", os.O_RDONLY) >= 0:
            found += 1
    except AttributeError:
        pass
    if os.path.exists("/dev/shm/sandbox-probe"):
        found += 1
    for path in ("/proc/sysvipc/shm", "/proc/sysvipc/msg", "/proc/sysvipc/sem"):
        try:
            with open(path) as f:
                found += len(f.read().splitlines()[1:])
        except OSError:
            pass
    return np.array(found)
