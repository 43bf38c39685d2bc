"""Escape probes run through the sandbox at startup (and after each zygote restart).

Each probe returns 1.0 if the escape worked (or a layer is missing) and 0.0 if it was blocked.
The sandbox refuses to serve unless every probe answers 0.0 and the run itself is OK.
"""

from __future__ import annotations

from grader.engine.executors.base import Call, RunResult, RunStatus

PROBE_NAMES = (
    "read a host file",
    "list the project directory",
    "write outside (/, /tmp, /sandbox, the project)",
    "connect to Redis on 127.0.0.1:6379",
    "signal the parent (zygote)",
    "fork a process",
    "read another process's environment",
    "layers active in the child (uid, caps, no_new_privs, seccomp)",
    "Landlock active (only Landlock forbids writing to /dev/null)",
    "share a uid with another visible process (the next child among them)",
    "change another process's limits, niceness, affinity, scheduling or I/O priority",
    "create a System V or POSIX IPC object, or a memfd",
    "exec a program",  # last: if it worked the process is gone and the run is not OK
)

PROBE_CODE = """
import os
import numpy as np

PROJECT = {project!r}
SLOT_UIDS = {uids!r}
IOPRIO_SET = {{"x86_64": 251, "aarch64": 30}}.get(os.uname().machine)


def _others():
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]


def _escaped(fn):
    try:
        return 1.0 if fn() is not False else 0.0
    except BaseException:
        return 0.0


def _read_host():
    for path in ("/etc/passwd", "/etc/shadow", "/etc/hostname", "/root/.bashrc"):
        try:
            open(path, "rb").read(1)
            return True
        except OSError:
            pass
    return False


def _list_project():
    return bool(os.listdir(PROJECT))


def _write():
    for path in ("/probe", "/tmp/probe", "/sandbox/probe", PROJECT + "/probe", "/dev/shm/probe"):
        try:
            with open(path, "w") as f:
                f.write("x")
            return True
        except OSError:
            pass
    return False


def _redis():
    import socket
    s = socket.create_connection(("127.0.0.1", 6379), timeout=0.5)
    s.close()


def _signal_parent():
    os.kill(os.getppid(), 0)


def _fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)


def _environ():
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                if open("/proc/%s/environ" % pid, "rb").read():
                    return True
            except OSError:
                pass
    return False


def _layers():
    status = {{}}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        status[key] = value.strip()
    ok = (
        os.getuid() in SLOT_UIDS
        and os.getgid() == os.getuid()
        and int(status["CapEff"], 16) == 0
        and int(status["CapPrm"], 16) == 0
        and status["NoNewPrivs"] == "1"
        and status["Seccomp"] == "2"
    )
    return not ok


def _landlock():
    with open("/dev/null", "w") as f:
        f.write("x")


def _same_uid():
    for pid in _others():
        try:
            with open("/proc/%d/status" % pid) as f:
                uids = next(line for line in f if line.startswith("Uid:")).split()[1:]
        except (OSError, StopIteration):
            continue
        if str(os.getuid()) in uids:
            return True
    return False


def _change_others():
    import ctypes
    import resource

    libc = ctypes.CDLL(None, use_errno=True)
    if IOPRIO_SET is None:
        return True  # an architecture this probe does not know: refuse rather than guess

    def ioprio_idle(which, who):
        if libc.syscall(IOPRIO_SET, which, who, 3 << 13) != 0:
            raise OSError(ctypes.get_errno(), "ioprio_set")

    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    attempts = []
    for pid in _others():
        attempts += [
            lambda pid=pid: resource.prlimit(pid, resource.RLIMIT_NOFILE, nofile),
            lambda pid=pid: os.setpriority(os.PRIO_PROCESS, pid, 19),
            lambda pid=pid: os.sched_setaffinity(pid, os.sched_getaffinity(0)),
            lambda pid=pid: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0)),
            lambda pid=pid: ioprio_idle(1, pid),
        ]
    attempts += [
        lambda: os.setpriority(os.PRIO_USER, 0, 19),
        lambda: os.setpriority(os.PRIO_PGRP, 0, 19),
        lambda: ioprio_idle(3, 0),
    ]
    for attempt in attempts:
        try:
            attempt()
        except (OSError, ValueError):
            continue
        return True
    return False


def _ipc():
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.shmget(0, 4096, 0o1000 | 0o600) >= 0:  # IPC_PRIVATE, IPC_CREAT
        return True
    if libc.msgget(0, 0o1000 | 0o600) >= 0 or libc.semget(0, 1, 0o1000 | 0o600) >= 0:
        return True
    if libc.mq_open(b"/selfcheck", os.O_CREAT | os.O_RDWR, 0o600, None) >= 0:
        return True
    try:
        os.close(os.memfd_create("selfcheck"))
        return True
    except OSError:
        return False


def _exec():
    os.execv("/usr/bin/true", ["true"])


PROBES = [_read_host, _list_project, _write, _redis, _signal_parent, _fork, _environ, _layers,
          _landlock, _same_uid, _change_others, _ipc, _exec]


def probe(i):
    return np.array(_escaped(PROBES[i]))
"""


def probe_calls() -> list[Call]:
    return [Call(args=(i,)) for i in range(len(PROBE_NAMES))]


LANDLOCK_PROBE = PROBE_NAMES.index("Landlock active (only Landlock forbids writing to /dev/null)")


def failures(result: RunResult, landlock: bool = True) -> list[str]:
    """What escaped, or why the self-check run itself is not trustworthy.

    ``landlock=False`` only where the kernel lacks Landlock and the operator allowed that.
    """
    if result.status != RunStatus.OK:
        return [f"self-check run ended {result.status}: {result.message}"]
    bad = []
    for i, (name, call) in enumerate(zip(PROBE_NAMES, result.calls, strict=True)):
        if i == LANDLOCK_PROBE and not landlock:
            continue
        if call.output is None or call.output.shape != () or float(call.output) != 0.0:
            bad.append(f"probe succeeded or failed to report: {name} ({call.error or call.output})")
    return bad
