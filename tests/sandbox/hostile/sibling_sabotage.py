# status: ok
# check: zeros
# A saboteur: it lowers the limits, niceness, CPU affinity, scheduling policy and I/O priority
# of every process it can see (the zygote's next child among them, forked while this runs).
# Each call returns how many of those changes took effect: none may. The suite grades a correct
# submission right after, in the child that was pre-forked meanwhile: it must still pass.
import ctypes
import os
import resource

import numpy as np

IOPRIO_SET = {"x86_64": 251, "aarch64": 30}.get(os.uname().machine)
IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP, IOPRIO_WHO_USER = 1, 2, 3
IOPRIO_IDLE = 3 << 13 | 7


def _others():
    me = os.getpid()
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me]


def attention(Q, K, V, mask=None):
    libc = ctypes.CDLL(None, use_errno=True)
    changed = 0
    for pid in _others():
        for which in (
            resource.RLIMIT_DATA,
            resource.RLIMIT_NOFILE,
            resource.RLIMIT_AS,
            resource.RLIMIT_CPU,
            resource.RLIMIT_STACK,
            resource.RLIMIT_NPROC,
        ):
            try:
                resource.prlimit(pid, which, (1, 1))
                changed += 1
            except (OSError, ValueError):
                pass
        try:
            os.setpriority(os.PRIO_PROCESS, pid, 19)
            changed += 1
        except OSError:
            pass
        try:
            os.sched_setaffinity(pid, {min(os.sched_getaffinity(0))})
            changed += 1
        except OSError:
            pass
        try:
            os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
            changed += 1
        except OSError:
            pass
        if IOPRIO_SET and libc.syscall(IOPRIO_SET, IOPRIO_WHO_PROCESS, pid, IOPRIO_IDLE) == 0:
            changed += 1
    # The same through the group and user forms, which reach every process of this uid.
    for which in (os.PRIO_USER, os.PRIO_PGRP):
        try:
            os.setpriority(which, 0, 19)
            changed += 1
        except OSError:
            pass
    if IOPRIO_SET:
        for who in (IOPRIO_WHO_PGRP, IOPRIO_WHO_USER):
            if libc.syscall(IOPRIO_SET, who, 0, IOPRIO_IDLE) == 0:
                changed += 1
    return np.array(changed)
