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
    "exec a program",  # last: if it worked the process is gone and the run is not OK
)

PROBE_CODE = """
import os
import numpy as np

PROJECT = {project!r}
SLOT_UID = {uid!r}


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
        os.getuid() == SLOT_UID
        and os.getgid() == SLOT_UID
        and int(status["CapEff"], 16) == 0
        and int(status["CapPrm"], 16) == 0
        and status["NoNewPrivs"] == "1"
        and status["Seccomp"] == "2"
    )
    return not ok


def _landlock():
    with open("/dev/null", "w") as f:
        f.write("x")


def _exec():
    os.execv("/usr/bin/true", ["true"])


PROBES = [_read_host, _list_project, _write, _redis, _signal_parent, _fork, _environ, _layers,
          _landlock, _exec]


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
