"""Every limit of grading in one place: its default, its bounds and why. No Django imports."""

from __future__ import annotations

import math
from dataclasses import dataclass

from grader.engine.executors.base import Limits

# Submitted source code. 64 KiB is far beyond any honest attention function and keeps rows,
# task messages and the sandbox's input pipe small.
CODE_MAX_BYTES = 64 * 1024


@dataclass(frozen=True)
class Bound:
    default: float
    low: float
    high: float

    def clamp(self, value: float | None) -> float:
        if value is None or not math.isfinite(value):
            return self.default
        return min(max(value, self.low), self.high)


# --- Per exercise: an instructor may set these within the bounds -------------------------------

# Wall clock for one whole run (module load + every call). A correct attention grades in
# milliseconds; 10 s leaves room for a slow-but-honest loop, and the 30 s cap keeps a worker
# slot from being held for long by one submission.
WALL_SECONDS = Bound(default=10.0, low=0.5, high=30.0)

# CPU time (RLIMIT_CPU, whole seconds, rounded up). Below the wall default so a busy loop is
# reported as a CPU limit, and bounded so one grade cannot starve the 2-core machine.
CPU_SECONDS = Bound(default=5.0, low=1.0, high=20.0)

# Address space *added* to the warm zygote's (numpy is already mapped, so the figure is close
# to what the student's code may allocate). 512 MiB holds hundreds of 512x512 float64 arrays;
# 2 GiB cap, because several workers share the machine.
MEMORY_MB = Bound(default=512, low=64, high=2048)


# --- An instructor's custom check (``checks.custom``): fixed, not per exercise -----------------

# Its source, stored in the check's parameters: a judging function is a few dozen lines.
CUSTOM_CHECK_SOURCE_MAX_CHARS = 16 * 1024
# Its failure message, authored in the admin and shown to students.
CUSTOM_CHECK_MESSAGE_MAX_CHARS = 500
# One run of it per grade, on every hidden input at once: comparing a few small arrays takes
# milliseconds, so these are far below a submission's own and the grade is not held long by a
# check that loops. The memory holds copies of every input and output it is sent.
CUSTOM_CHECK_LIMITS = Limits(wall_seconds=5.0, cpu_seconds=2.0, memory_mb=256)


def clamp(limits: Limits) -> Limits:
    """The limits an exercise asked for, forced inside the bounds above."""
    return Limits(
        wall_seconds=WALL_SECONDS.clamp(limits.wall_seconds),
        cpu_seconds=CPU_SECONDS.clamp(limits.cpu_seconds),
        memory_mb=int(MEMORY_MB.clamp(limits.memory_mb)),
    )


def cpu_rlimit_seconds(limits: Limits) -> int:
    """RLIMIT_CPU takes whole seconds: round up so the limit is never stricter than asked."""
    return max(1, math.ceil(limits.cpu_seconds))


# --- Fixed: the sandbox's own fences --------------------------------------------------------------

# What the student prints (stdout and stderr together): keep the first 64 KiB to show, and kill
# the child past 1 MiB, so a print loop cannot fill memory or disks with logs.
STDOUT_KEEP_BYTES = 64 * 1024
STDOUT_KILL_BYTES = 1024 * 1024

# One output array, and all replies of one run together. A 512x512 float64 is 2 MiB; these
# bounds stop a huge np.broadcast_to view or a deliberate flood from filling the worker's memory.
OUTPUT_ARRAY_MAX_BYTES = 16 * 1024 * 1024
OUTPUT_TOTAL_MAX_BYTES = 64 * 1024 * 1024

# One whole request (the code and every input of a run). The attention hidden suite is < 1 MiB;
# a bound keeps a misconfigured check from pushing gigabytes through the pipe.
REQUEST_MAX_BYTES = 256 * 1024 * 1024

# A traceback or error text shown to the student: enough for a deep traceback's useful end.
ERROR_TEXT_MAX_CHARS = 8 * 1024

# Per child (rlimits). NPROC counts threads of the slot's uid across the machine: enough for a
# few honest threads of the running child and the pre-forked ones, too few for a thread bomb.
# NOFILE: a child needs a handful of descriptors plus lazy imports. FSIZE 0: nothing may write a
# file (Landlock forbids it too). CORE 0: no core dumps of student processes.
RLIMIT_NPROC = 32
RLIMIT_NOFILE = 64
RLIMIT_FSIZE = 0

# Per worker-slot pids cgroup, when the cgroup tree is writable: a fence on the whole zygote.
CGROUP_PIDS_MAX = 128

# Student code runs as a uid/gid of its own: each worker slot owns CHILD_UIDS_PER_SLOT of them
# (from SLOT_UID_BASE + slot * CHILD_UIDS_PER_SLOT), and its zygote gives every child one that no
# other live child of the slot holds. So no child can change another's limits, priority or
# placement (the kernel allows that between processes of one uid), neither the next child,
# pre-forked while this one runs, nor another worker's, even if every other layer failed. Enough
# for the running child, the pre-forked ones and one still dying.
SLOT_UID_BASE = 61000
CHILD_UIDS_PER_SLOT = 4
MAX_SLOTS = 256

# Starting a zygote takes a fraction of a second; allow for a loaded machine. A child that does
# not say it is ready within CHILD_READY_SECONDS means the sandbox broke (our fault, not the
# student's).
ZYGOTE_START_SECONDS = 20.0
CHILD_READY_SECONDS = 5.0
# After we ask the zygote to kill a child: how long to wait for the exit before restarting it.
KILL_GRACE_SECONDS = 2.0
