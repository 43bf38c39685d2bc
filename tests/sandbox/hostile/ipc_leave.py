# status: ok
# check: zeros
# then: ipc_find
# Leaves System V shared memory, a message queue and semaphores under known keys, a POSIX
# message queue, a file in /dev/shm and a memfd, and pins memory outside its own address space
# where it can. Each call returns how many of those it made: none may exist. The suite then
# grades ipc_find.py on the same worker, which fails if it finds any of them.
import ctypes
import os

import numpy as np

KEY = 0x5EED
IPC_CREAT = 0o1000


def attention(Q, K, V, mask=None):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    made = 0
    shmid = libc.shmget(KEY, 64 << 20, IPC_CREAT | 0o666)
    if shmid >= 0:
        made += 1
        addr = libc.shmat(shmid, None, 0)
        if addr not in (None, ctypes.c_void_p(-1).value):
            ctypes.memset(addr, 1, 64 << 20)  # resident, and it would outlive this process
    if libc.msgget(KEY, IPC_CREAT | 0o666) >= 0:
        made += 1
    if libc.semget(KEY, 4, IPC_CREAT | 0o666) >= 0:
        made += 1
    try:
        if libc.mq_open(b"/sandbox-probe", os.O_CREAT | os.O_RDWR, 0o666, None) >= 0:
            made += 1
    except AttributeError:
        pass
    try:
        with open("/dev/shm/sandbox-probe", "wb") as f:
            f.write(b"x" * (1 << 20))
        made += 1
    except OSError:
        pass
    try:
        fd = os.memfd_create("pinned")
        os.write(fd, b"x" * (1 << 20))
        made += 1
    except OSError:
        pass
    return np.array(made)
