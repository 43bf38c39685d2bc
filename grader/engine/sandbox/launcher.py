"""Starting the zygote under bubblewrap, a uid slot per worker, a pids cgroup where possible."""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import sys
import time
from pathlib import Path

from grader.engine import limits

log = logging.getLogger(__name__)

INSIDE_DIR = Path(__file__).resolve().parent / "inside"
# Where the sandbox's own code appears inside: nothing else of the project is visible there.
INSIDE_MOUNT = "/sandbox"
# The venv appears at a neutral path, so not even the project's directory name is visible.
VENV_MOUNT = "/venv"
SLOT_LOCK_DIR = Path("/run/grader-sandbox")


class LaunchError(RuntimeError):
    """The sandbox cannot be started here; nothing may run."""


def find_bwrap() -> str:
    path = shutil.which("bwrap")
    if not path:
        raise LaunchError("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    return path


def _dirs_with_perms(path: str) -> list[str]:
    """--dir every ancestor with mode 0755: bubblewrap would make them 0700, which the dropped
    uid could not traverse (the pyenv Python lives under /root)."""
    args: list[str] = []
    parts = Path(path).parts[1:-1]
    for i in range(len(parts)):
        args += ["--perms", "0755", "--dir", "/" + "/".join(parts[: i + 1])]
    return args


def python_paths() -> tuple[str | None, str, str]:
    """(venv prefix or None, base Python install, interpreter path inside the sandbox)."""
    prefix = os.path.realpath(sys.prefix)
    base = os.path.realpath(sys.base_prefix)
    if prefix == base:
        return None, base, os.path.join(base, "bin", "python3")
    # The venv's python is a symlink into the base install (bound at its own path), and finds
    # its site-packages from the pyvenv.cfg next to it, wherever the venv is mounted.
    return prefix, base, f"{VENV_MOUNT}/bin/python3"


def bwrap_argv(bwrap: str, ctrl_fd: int) -> list[str]:
    prefix, base, exe = python_paths()
    argv = [
        bwrap,
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        # One BLAS thread: the child's NPROC budget and seccomp expect it, and it is faster at
        # these sizes. -I ignores PYTHON* variables anyway.
        "--setenv",
        "OPENBLAS_NUM_THREADS",
        "1",
        "--setenv",
        "OMP_NUM_THREADS",
        "1",
        "--setenv",
        "MKL_NUM_THREADS",
        "1",
        # Root keeps every capability in bubblewrap unless told otherwise; the zygote needs only
        # these three (drop to the slot uid, kill its children after that drop).
        "--cap-drop",
        "ALL",
        "--cap-add",
        "CAP_SETUID",
        "--cap-add",
        "CAP_SETGID",
        "--cap-add",
        "CAP_KILL",
        "--hostname",
        "sandbox",
        "--ro-bind",
        "/usr",
        "/usr",
    ]
    for top in ("bin", "lib", "lib64", "sbin"):
        host = Path("/") / top
        if host.is_symlink():
            argv += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            argv += ["--ro-bind", str(host), str(host)]
    argv += ["--perms", "0755", "--dir", "/etc"]
    # find_library (pyseccomp -> libseccomp) reads the loader cache.
    argv += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += [*_dirs_with_perms(base), "--ro-bind", base, base]
    if prefix is not None:
        argv += ["--ro-bind", prefix, VENV_MOUNT]
    argv += ["--ro-bind", str(INSIDE_DIR), INSIDE_MOUNT, "--chdir", "/"]
    argv += ["--", exe, "-I", "-B", f"{INSIDE_MOUNT}/zygote.py", str(ctrl_fd)]
    return argv


class SlotLock:
    """A worker slot held with an flock for the executor's lifetime: slot n owns the child uids
    base + n * CHILD_UIDS_PER_SLOT onwards (see grader.engine.limits)."""

    def __init__(self, slot: int | None) -> None:
        SLOT_LOCK_DIR.mkdir(parents=True, exist_ok=True, mode=0o700)
        candidates = [slot] if slot is not None else list(range(limits.MAX_SLOTS))
        for n in candidates:
            if not 0 <= n < limits.MAX_SLOTS:
                raise LaunchError(f"slot {n} out of range")
            fd = os.open(SLOT_LOCK_DIR / f"slot-{n}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.slot = n
            self._fd = fd
            return
        raise LaunchError("every sandbox slot is taken (or the requested one is)")

    @property
    def uids(self) -> tuple[int, ...]:
        first = limits.SLOT_UID_BASE + self.slot * limits.CHILD_UIDS_PER_SLOT
        return tuple(range(first, first + limits.CHILD_UIDS_PER_SLOT))

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def pids_cgroup(slot: int) -> Path | None:
    """A pids cgroup for this slot, nested under our own (so an outer fence still applies)."""
    root = Path("/sys/fs/cgroup/pids")
    try:
        own = next(
            line.split(":", 2)[2].strip()
            for line in Path("/proc/self/cgroup").read_text().splitlines()
            if line.split(":", 2)[1] == "pids"
        )
        group = root / own.lstrip("/") / f"grader-sandbox-{slot}"
        group.mkdir(exist_ok=True)
        (group / "pids.max").write_text(str(limits.CGROUP_PIDS_MAX))
        return group
    except (OSError, StopIteration, IndexError) as e:
        log.info("sandbox: no pids cgroup for slot %d (%s); relying on RLIMIT_NPROC", slot, e)
        return None


# How deep under the pids hierarchy's root to look for a dead worker's groups: a worker's own
# group is rarely more than a few levels down (a service, a container, a test fence).
STALE_SEARCH_DEPTH = 4


def cgroups_stale_remove(slot: int, keep: Path | None) -> int:
    """Remove the empty ``grader-sandbox-<slot>`` groups a killed worker left; how many.

    Every executor on this host takes the slot's flock before making a group of that name,
    and we hold it: any other such group belongs to a dead holder (kill -9 never runs close()),
    in a parent group of its own (another service, container or test fence). Groups that still
    have processes are left: they may be a sandbox of a host we share cgroups but not /run with.
    """
    root = Path("/sys/fs/cgroup/pids")
    name = f"grader-sandbox-{slot}"
    removed = 0
    for dirpath, dirnames, _ in os.walk(root):
        here = Path(dirpath)
        if len(here.relative_to(root).parts) >= STALE_SEARCH_DEPTH:
            dirnames.clear()
        if name not in dirnames:
            continue
        dirnames.remove(name)  # a sandbox's group has no groups of ours inside
        group = here / name
        if group == keep:
            continue
        try:
            if (group / "cgroup.procs").read_text().split():
                continue
            group.rmdir()
            removed += 1
        except OSError:
            continue
    if removed:
        log.info("sandbox: removed %d stale pids cgroup(s) of slot %d", removed, slot)
    return removed


def cgroup_clear(group: Path | None) -> int:
    """SIGKILL whatever a dead holder of this slot left running in the slot's group; how many.

    Only a zygote of this slot, moved in by join_cgroup, and its children ever enter the group,
    and we hold the slot: anything in it now is a dead holder's sandbox (or our own previous
    zygote, already killed and still dying).
    """
    if group is None:
        return 0
    try:
        members = [int(pid) for pid in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return 0
    killed = 0
    for pid in members:
        if pid <= 0 or pid == os.getpid():  # 0: a process outside our pid namespace
            continue
        try:
            os.kill(pid, 9)
            killed += 1
        except OSError:
            continue  # gone meanwhile
    if killed:
        log.warning("sandbox: killed %d leftover process(es) in %s", killed, group)
    return killed


def process_children() -> dict[int, list[int]]:
    """parent pid -> its children's pids (host pids), from /proc/*/stat (no /proc/*/children
    here)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces or parentheses: fields resume after the last ")".
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    return children


def process_tree(root: int, children: dict[int, list[int]] | None = None) -> list[int]:
    """root and its descendants, in ``children`` (by default the process table now)."""
    if children is None:
        children = process_children()
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def join_cgroup(group: Path | None, root: int) -> None:
    """Move a started zygote (bubblewrap, its init, the zygote) into the slot's pids cgroup.

    Done after the zygote said hello and before it forks any child (children then inherit the
    group), rather than in a preexec_fn, which is unsafe in a threaded web process.
    """
    if group is None:
        return
    try:
        for pid in process_tree(root):
            (group / "cgroup.procs").write_text(str(pid))
    except OSError as e:
        log.info("sandbox: could not move the zygote into %s (%s)", group, e)


def remove_cgroup(group: Path | None) -> None:
    # The sandbox's processes die asynchronously after bubblewrap is killed: retry briefly.
    for _ in range(25):
        if group is None or not group.exists():
            return
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.02)
