"""A fence around anything that runs hostile code in tests: a pid namespace and a pids cgroup.

Even if every sandbox layer failed, ``kill(-1, SIGKILL)`` would reach only the fenced process
tree (not the team's session), and a fork bomb would stop at the cgroup's pids.max. The
sandbox's own per-slot pids cgroup nests under this one, so the fence still applies to it.

Usage as a script: ``python tests/sandbox/fence.py CMD ARGS...``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

PIDS_ROOT = Path("/sys/fs/cgroup/pids")
FENCE_PIDS_MAX = 256


def _own_pids_cgroup() -> Path:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "pids":
            return PIDS_ROOT / path.lstrip("/")
    raise OSError("no pids cgroup")


def make_cgroup() -> Path | None:
    try:
        group = _own_pids_cgroup() / f"sandbox-test-fence-{os.getpid()}"
        group.mkdir(exist_ok=True)
        (group / "pids.max").write_text(str(FENCE_PIDS_MAX))
        return group
    except OSError:
        return None


def remove_cgroup(group: Path | None) -> None:
    if group is None:
        return
    # Nested groups (the sandbox's slot groups) first.
    for sub in sorted(group.glob("*/"), reverse=True):
        if sub.is_dir():
            with contextlib.suppress(OSError):
                sub.rmdir()
    with contextlib.suppress(OSError):
        group.rmdir()


def fenced_argv(argv: list[str]) -> list[str]:
    unshare = shutil.which("unshare")
    if unshare is None:
        raise RuntimeError("unshare (util-linux) is required to fence hostile tests")
    # --kill-child: if unshare dies, its child (pid 1 of the namespace) is killed, and with it
    # every process of the namespace.
    return [unshare, "--pid", "--fork", "--kill-child", "--mount-proc", *argv]


def popen_fenced(argv: list[str], group: Path | None, **kwargs: object) -> subprocess.Popen:
    def join() -> None:
        if group is not None:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    return subprocess.Popen(fenced_argv(argv), preexec_fn=join, **kwargs)  # type: ignore[call-overload]


def main() -> int:
    group = make_cgroup()
    try:
        proc = popen_fenced(sys.argv[1:], group)
        return proc.wait()
    finally:
        remove_cgroup(group)


if __name__ == "__main__":
    sys.exit(main())
