"""The warm sandbox of a worker process: started once, self-checked, reused for every grade."""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import socket
import threading
import time
from pathlib import Path

from celery.signals import worker_init, worker_process_init, worker_process_shutdown
from django.conf import settings

from grader.engine.executors import Executor

log = logging.getLogger(__name__)

# After a failed start, wait this long before trying again: a broken host stays refused
# without retrying on every task, and a passing glitch heals itself.
RETRY_START_AFTER_SECONDS = 30.0

_lock = threading.Lock()
_executor: Executor | None = None
_failed_at: float | None = None
# (pid, identity) of this process: a forked pool child sees a pid that differs from the one its
# parent cached, and draws a boot id of its own.
_identity: tuple[int, str] | None = None


def worker_identity() -> str:
    """host:pid:boot, unique per process: what a claim records and a fault test kills.

    host:pid alone is not unique: two containers (separate pid namespaces) on one host both
    have a process 4, and a claim must never mistake the other for itself. The random boot id
    tells them apart, and also a process that reuses the pid of one that died.
    """
    global _identity
    pid = os.getpid()
    if _identity is None or _identity[0] != pid:
        _identity = (pid, f"{socket.gethostname()}:{pid}:{secrets.token_hex(4)}")
    return _identity[1]


def worker_pid(identity: str) -> int:
    """The pid part of a worker identity (as seen in the worker's own pid namespace)."""
    return int(identity.split(":")[1])


def executor_get() -> Executor | None:
    """This process's sandbox, or None if it refused to start (the task then fails closed)."""
    global _executor, _failed_at
    with _lock:
        if _failed_at is not None and time.monotonic() - _failed_at < RETRY_START_AFTER_SECONDS:
            return None
        if _executor is None:
            from grader.engine.sandbox import SandboxExecutor

            try:
                executor = SandboxExecutor(allow_no_landlock=settings.SANDBOX_ALLOW_NO_LANDLOCK)
                executor.self_check()
            except Exception:
                log.critical(
                    "sandbox refused to start in %s; not grading here",
                    worker_identity(),
                    exc_info=True,
                )
                _failed_at = time.monotonic()
                return None
            _failed_at = None
            _executor = executor
            atexit.register(executor.close)
        return _executor


def executor_close() -> None:
    """Drop this process's sandbox; the next executor_get() starts a fresh one."""
    global _executor
    with _lock:
        if _executor is not None:
            _executor.close()
            _executor = None


# Graders yield the CPU to the web: with every worker busy, pages must stay fast.
# Niceness 10 weighs about a tenth of a nice-0 process under contention (CFS weights 110 vs
# 1024) and SCHED_BATCH keeps a grader's wakeups from preempting a request; at idle, graders
# still get all the CPU there is. Both pass to what this process forks or executes afterwards:
# the zygote under bubblewrap and every child that runs student code. The default of
# settings.GRADER_WORKER_NICENESS (0 there: leave the priority alone).
WORKER_NICENESS = 10
# Niceness alone orders processes of one session only: with autogrouping (Linux's default
# for tasks in the root cpu cgroup), each session is weighed as one, and a sandbox child calls
# setsid, so it would weigh as much as the whole web server (measured: a nice-10 loop in its
# own session took half a core from a nice-0 one). So the worker also moves itself into a cpu
# cgroup of the same weight, which its zygotes and children inherit whatever their session.
CPU_CGROUP_ROOT = Path("/sys/fs/cgroup/cpu")  # cgroup v1, as on this host
CPU_CGROUP_NAME = "grader-workers"


def _cpu_shares(niceness: int) -> int:
    return max(2, round(1024 / 1.25**niceness))  # the kernel's weight for that niceness


def worker_cpu_cgroup_join(*, niceness: int) -> Path | None:
    """This process into the graders' cpu cgroup (weighted like `niceness`), under its own;
    None where there is no writable cgroup v1 cpu hierarchy (niceness then does what it can:
    with systemd, give the worker's unit a CPUWeight instead)."""
    try:
        own = next(
            line.split(":", 2)[2].strip()
            for line in Path("/proc/self/cgroup").read_text().splitlines()
            if "cpu" in line.split(":", 2)[1].split(",")
        )
        here = CPU_CGROUP_ROOT / own.lstrip("/")
        if here.name == CPU_CGROUP_NAME:  # a pool process, forked from a main one already in
            return here
        group = here / CPU_CGROUP_NAME
        group.mkdir(exist_ok=True)
        (group / "cpu.shares").write_text(str(_cpu_shares(niceness)))
        (group / "cgroup.procs").write_text(str(os.getpid()))  # every thread moves with it
        return group
    except (OSError, StopIteration, IndexError) as e:
        log.info("grader: no cpu cgroup (%s); relying on niceness alone", e)
        return None


def worker_priority_lower(*, niceness: int | None = None) -> None:
    """Every thread of this process to at least `niceness`, SCHED_BATCH, in the graders' cpu
    cgroup; never raises (a grader at normal priority means slower pages, not a broken one)."""
    if niceness is None:
        niceness = getattr(settings, "GRADER_WORKER_NICENESS", WORKER_NICENESS)
    if niceness <= 0:
        return
    worker_cpu_cgroup_join(niceness=niceness)
    try:
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    for tid in threads:  # Linux keeps both per thread: set each one, not only the caller
        try:
            if os.getpriority(os.PRIO_PROCESS, tid) < niceness:
                os.setpriority(os.PRIO_PROCESS, tid, niceness)
            if os.sched_getscheduler(tid) == os.SCHED_OTHER:
                os.sched_setscheduler(tid, os.SCHED_BATCH, os.sched_param(0))
        except OSError as e:
            log.warning("grader priority not lowered for thread %d: %s", tid, e)


@worker_init.connect
def _lower_main(**_: object) -> None:
    # The main process (consumer, beat with -B): it forks the pool, so the pool starts low too.
    worker_priority_lower()


@worker_process_init.connect
def _warm_up(**_: object) -> None:
    worker_priority_lower()  # before the zygote starts, so it and its children inherit it
    # Start the zygote and run the escape probes before the first task arrives.
    executor_get()


@worker_process_shutdown.connect
def _shut_down(**_: object) -> None:
    executor_close()
