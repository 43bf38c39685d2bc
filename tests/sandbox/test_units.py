"""Pieces of the sandbox that run no student code: .npy guard, limits, launcher, fail-closed."""

from __future__ import annotations

import io
import math
import os
import pickle
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from grader.engine import limits
from grader.engine.executors.base import Limits
from grader.engine.sandbox import SandboxExecutor, SandboxUnavailable, launcher, npy

PROJECT = Path(__file__).resolve().parents[2]


def _npy(arr: np.ndarray, **kw: object) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, **kw)  # type: ignore[arg-type]
    return buf.getvalue()


@pytest.mark.parametrize(
    "arr",
    [
        np.arange(12.0).reshape(3, 4),
        np.array(2.5),
        np.zeros((0, 5)),
        np.ones((2, 3), dtype=bool),
        np.arange(5, dtype=">i4"),
        np.arange(6, dtype=np.uint8),
        np.arange(4, dtype=np.float16),
        np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    ],
)
def test_npy_round_trip(arr: np.ndarray) -> None:
    out = npy.loads(_npy(arr), 1 << 20)
    assert type(out) is np.ndarray
    assert out.dtype == arr.dtype and out.shape == arr.shape
    np.testing.assert_array_equal(out, arr)
    out[...] = 0  # writable, and not a view of the message


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not an npy at all",
        _npy(np.array([object()], dtype=object), allow_pickle=True),
        _npy(np.arange(3, dtype=complex)),
        _npy(np.zeros(2, dtype=[("a", "f8")])),
        _npy(np.array(["x"])),
        _npy(np.arange(3.0))[:-1],
        _npy(np.arange(3.0)) + b"\0",
        _npy(np.arange(3.0)).replace(b"(3,)", b"(4,)"),
        _npy(np.arange(3.0)).replace(b"(3,)", b"(-3,)"),
        _npy(np.arange(3, dtype=np.longdouble)),
        pickle.dumps(np.arange(3)),
        b"\x93NUMPY\x01\x00" + struct.pack("<H", 60000) + b"{" * 100,
        b"\x93NUMPY\x09\x00" + _npy(np.arange(3.0))[8:],
    ],
)
def test_npy_rejects_unsafe_or_malformed(data: bytes) -> None:
    with pytest.raises(npy.UnsafeArray):
        npy.loads(data, 1 << 20)


def test_npy_size_bound_checked_before_reading() -> None:
    data = _npy(np.zeros(1000))
    with pytest.raises(npy.UnsafeArray, match="too large"):
        npy.loads(data, 7999)
    # A header claiming a gigantic shape is refused from the header alone.
    huge = _npy(np.zeros(1)).replace(b"(1,)", b"(10000000000000,)")
    with pytest.raises(npy.UnsafeArray):
        npy.loads(huge, 1 << 30)


def test_limits_defaults_match_the_executor_interface() -> None:
    d = Limits()
    assert limits.WALL_SECONDS.default == d.wall_seconds
    assert limits.CPU_SECONDS.default == d.cpu_seconds
    assert limits.MEMORY_MB.default == d.memory_mb
    assert limits.clamp(d) == d


def test_limits_clamp() -> None:
    low = limits.clamp(Limits(wall_seconds=0.0, cpu_seconds=-1, memory_mb=1))
    assert low == Limits(
        wall_seconds=limits.WALL_SECONDS.low,
        cpu_seconds=limits.CPU_SECONDS.low,
        memory_mb=int(limits.MEMORY_MB.low),
    )
    high = limits.clamp(Limits(wall_seconds=1e9, cpu_seconds=math.inf, memory_mb=10**9))
    assert high.wall_seconds == limits.WALL_SECONDS.high
    assert high.cpu_seconds == limits.CPU_SECONDS.default  # not finite: the default
    assert high.memory_mb == limits.MEMORY_MB.high
    nan = limits.clamp(Limits(wall_seconds=math.nan))
    assert nan.wall_seconds == limits.WALL_SECONDS.default
    assert limits.cpu_rlimit_seconds(Limits(cpu_seconds=1.2)) == 2
    assert limits.cpu_rlimit_seconds(Limits(cpu_seconds=3.0)) == 3


def _binds(argv: list[str]) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a in ("--bind", "--ro-bind")]


def test_bwrap_binds_are_minimal_and_read_only() -> None:
    argv = launcher.bwrap_argv("/usr/bin/bwrap", ctrl_fd=5)
    assert "--bind" not in argv  # read-only binds only
    for flag in ("--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"):
        assert flag in argv
    assert "--die-with-parent" in argv and "--new-session" in argv and "--clearenv" in argv
    caps = [argv[i + 1] for i, a in enumerate(argv) if a == "--cap-add"]
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert sorted(caps) == ["CAP_KILL", "CAP_SETGID", "CAP_SETUID"]
    binds = _binds(argv)
    sources = [src for src, _ in binds]
    assert os.path.realpath(sys.base_prefix) in sources
    assert str(launcher.INSIDE_DIR) in sources
    for src, dst in binds:
        # From the project, only the venv and the sandbox's own inside/ directory.
        if src.startswith(str(PROJECT) + "/") or src == str(PROJECT):
            assert src in (os.path.realpath(sys.prefix), str(launcher.INSIDE_DIR)), src
        assert not dst.startswith(str(PROJECT)), dst
        assert "db.sqlite3" not in src and "settings" not in src
    assert ("/etc", "/etc") not in binds


def test_fails_closed_without_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launcher.shutil, "which", lambda name: None)
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        SandboxExecutor(slot=limits.MAX_SLOTS - 1)


def test_allow_no_landlock_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDBOX_ALLOW_NO_LANDLOCK", "1")
    ex = SandboxExecutor(slot=limits.MAX_SLOTS - 1, start=False)
    try:
        assert ex.allow_no_landlock is True
    finally:
        ex.close()
    monkeypatch.setenv("SANDBOX_ALLOW_NO_LANDLOCK", "0")
    ex = SandboxExecutor(slot=limits.MAX_SLOTS - 1, start=False, allow_no_landlock=None)
    try:
        assert ex.allow_no_landlock is False
    finally:
        ex.close()
    ex = SandboxExecutor(slot=limits.MAX_SLOTS - 1, start=False, allow_no_landlock=True)
    ex.close()


def test_slots_are_exclusive() -> None:
    a = SandboxExecutor(slot=limits.MAX_SLOTS - 2, start=False)
    try:
        with pytest.raises(SandboxUnavailable):
            SandboxExecutor(slot=limits.MAX_SLOTS - 2, start=False)
        b = SandboxExecutor(start=False)
        try:
            assert b.slot != a.slot
            first = limits.SLOT_UID_BASE + b.slot * limits.CHILD_UIDS_PER_SLOT
            assert b.uids == tuple(range(first, first + limits.CHILD_UIDS_PER_SLOT))
            assert not set(a.uids) & set(b.uids)  # no two workers' children share a uid
        finally:
            b.close()
    finally:
        a.close()


# --- the seccomp filter compiled once by the zygote ---------------------------------------------


def _exported(pid: int) -> bytes:
    import tempfile

    from grader.engine.sandbox.inside import layers

    with tempfile.TemporaryFile() as out:
        layers._seccomp_filter(pid).export_bpf(out)  # type: ignore[attr-defined]
        out.seek(0)
        return out.read()


@pytest.mark.parametrize("pid", [2, 1234, 4_194_303])
def test_the_precompiled_filter_with_a_pid_written_in_is_what_libseccomp_builds_for_it(
    pid: int,
) -> None:
    # Builds and exports only: nothing is loaded into this process.
    from grader.engine.sandbox.inside import layers

    program = layers.seccomp_program()
    assert program.pid_offsets
    assert bytes(layers.seccomp_bpf_for(program, pid)) == _exported(pid)
    # The placeholder compares with nothing else: no syscall number or flag equals it.
    assert layers.PID_PLACEHOLDER > 2**22


def test_cpu_pressure_is_the_share_of_time_tasks_waited(tmp_path: Path) -> None:
    from grader.engine.sandbox.pool import BUSY_CPU_STALL, CpuPressure

    psi = tmp_path / "cpu"
    pressure = CpuPressure(str(psi))

    def total(us: int) -> None:
        psi.write_text(
            f"some avg10=0.00 avg60=0.00 avg300=0.00 total={us}\n"
            "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
        )

    total(1_000_000)
    assert pressure.stalled_share(10.0) is None  # the first look has nothing to compare
    total(1_050_000)  # 50 ms of waiting in 0.1 s: a burst
    assert pressure.stalled_share(10.1) == pytest.approx(0.5)
    assert pressure.stalled_share(10.1) is None  # no time passed: no answer
    total(1_060_000)
    share = pressure.stalled_share(10.3)
    assert share == pytest.approx(0.05) and share < BUSY_CPU_STALL
    psi.unlink()  # no PSI here (or unreadable): the gap alone decides
    assert pressure.stalled_share(10.4) is None
    total(1_070_000)
    assert pressure.stalled_share(10.5) is None  # starts over after the gap in its readings
    assert CpuPressure(None).stalled_share(1.0) is None


# --- between two children: the second layer and the state a run starts from -------------------


def _in_child(fn: object) -> int:
    """Run trusted test code in a forked child (whatever it loads stays there): its exit code,
    0 when it returned True, 1 when False, 2 when it raised."""
    pid = os.fork()
    if pid == 0:
        code = 2
        try:
            code = 0 if fn() else 1  # type: ignore[operator]
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_seccomp_denies_changing_another_process_and_every_ipc_object() -> None:
    """The second layer alone: this test runs as root, so only the filter can refuse. Every
    attempt on the parent would change nothing if it went through (its own values)."""
    import ctypes
    import resource

    from grader.engine.sandbox.inside import layers

    parent = os.getpid()

    def attempts() -> bool:
        layers.load_seccomp(os.getpid())
        libc = ctypes.CDLL(None, use_errno=True)
        set_ioprio = layers._ioprio_syscalls()[0]
        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
        refused = []
        for attempt in (
            lambda: resource.prlimit(parent, resource.RLIMIT_NOFILE, nofile),
            lambda: os.setpriority(os.PRIO_PROCESS, parent, os.getpriority(os.PRIO_PROCESS, 0)),
            lambda: os.setpriority(os.PRIO_USER, 0, os.getpriority(os.PRIO_PROCESS, 0)),
            lambda: os.setpriority(os.PRIO_PGRP, 0, os.getpriority(os.PRIO_PROCESS, 0)),
            lambda: os.sched_setaffinity(parent, os.sched_getaffinity(parent)),
            lambda: os.sched_setscheduler(parent, os.sched_getscheduler(parent), os.sched_param(0)),
            lambda: os.memfd_create("x"),
        ):
            try:
                attempt()
                refused.append(False)
            except PermissionError:
                refused.append(True)
        refused.append(libc.syscall(set_ioprio, layers.IOPRIO_WHO_PROCESS, parent, 0) == -1)
        refused.append(libc.shmget(0, 4096, 0o1000 | 0o600) == -1)
        refused.append(libc.msgget(0, 0o1000 | 0o600) == -1)
        refused.append(libc.semget(0, 1, 0o1000 | 0o600) == -1)
        # Its own: still allowed (the harness sets its limits and priority this way).
        resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0))
        os.sched_setaffinity(0, os.sched_getaffinity(0))
        return all(refused)

    assert _in_child(attempts) == 0


def test_a_child_state_is_set_again_or_the_run_is_refused() -> None:
    import resource

    from grader.engine.sandbox.inside import layers

    trusted = layers.process_state()

    def restored() -> bool:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (16, hard))
        resource.setrlimit(
            resource.RLIMIT_DATA, (1 << 20, resource.getrlimit(resource.RLIMIT_DATA)[1])
        )
        os.sched_setaffinity(0, {min(trusted.affinity)})
        os.setpriority(os.PRIO_PROCESS, 0, min(trusted.niceness + 5, 19))
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        layers.process_state_set(trusted)  # as root here: everything can be undone
        return layers.process_state() == trusted

    def refused(change: str) -> bool:
        if change == "hard-limit":
            resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))
        else:
            os.setpriority(os.PRIO_PROCESS, 0, min(trusted.niceness + 5, 19))
        os.setresgid(65534, 65534, 65534)
        os.setresuid(65534, 65534, 65534)  # no privilege left to undo it
        try:
            layers.process_state_set(trusted)
        except layers.LayerError:
            return True
        return False

    assert _in_child(restored) == 0
    assert _in_child(lambda: refused("hard-limit")) == 0
    if trusted.niceness < 19:
        assert _in_child(lambda: refused("niceness")) == 0
