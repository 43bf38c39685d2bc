"""The warm sandbox of a worker process: started once, self-checked, reused for every grade."""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import socket
import threading
import time

from celery.signals import worker_process_init, worker_process_shutdown
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


@worker_process_init.connect
def _warm_up(**_: object) -> None:
    # Start the zygote and run the escape probes before the first task arrives.
    executor_get()


@worker_process_shutdown.connect
def _shut_down(**_: object) -> None:
    executor_close()
