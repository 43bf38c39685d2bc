# status: ok
# check: zeros
import ctypes
import os

import numpy as np


def attention(Q, K, V, mask=None):
    libc = ctypes.CDLL(None, use_errno=True)
    hits = 0
    if libc.ptrace(16, os.getppid(), 0, 0) == 0:  # PTRACE_ATTACH
        hits += 1
    if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER
        hits += 1
    if libc.syscall(56, 0x11, 0, 0, 0, 0) >= 0:  # clone(SIGCHLD): a new process
        os._exit(0)
    if libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0:
        hits += 1
    try:
        os.setuid(0)
        hits += 1
    except OSError:
        pass
    for fd in range(3, 64):  # no stray descriptor of the zygote or the parent
        try:
            os.fstat(fd)
            if fd not in (3,):
                hits += 100
        except OSError:
            pass
    return np.array(hits)
