"""The trusted side of the sandbox: SandboxExecutor.

One per worker process. It starts a zygote under bubblewrap (launcher.py), keeps children
forked and layered ahead of time, sends each run's code and inputs straight to one child, reads
back framed .npy outputs (headers checked before any array is built; see npy.py) and what the
code printed, and enforces the wall clock and output limits. Student code never runs in this
process, and nothing here trusts a byte the child wrote.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from grader.engine import limits as L
from grader.engine.executors.base import (
    Arg,
    Call,
    CallResult,
    Gate,
    Limits,
    RunResult,
    RunStatus,
)
from grader.engine.sandbox import launcher, npy, selfcheck
from grader.engine.sandbox import messages as M
from grader.engine.sandbox.inside import protocol as p

log = logging.getLogger("grader.engine.sandbox")

ALLOW_NO_LANDLOCK_ENV = "SANDBOX_ALLOW_NO_LANDLOCK"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
# A frame from the child may hold one array (plus its .npy header) or an error text.
MAX_RESULT_FRAME = L.OUTPUT_ARRAY_MAX_BYTES + npy.HEADER_MAX_BYTES + 16
STDOUT_TRUNCATED = "\n[... output truncated after {kib} KiB]"
# The shared result area of a child: every output of a run, frame headers, the length word.
AREA_BYTES = L.OUTPUT_TOTAL_MAX_BYTES + 4096
# Frames holding text (tracebacks, error details) are small; their JSON is parsed here.
MAX_TEXT_FRAME = 4 * L.ERROR_TEXT_MAX_CHARS + 4096
# All a run may send through the result pipe: BEGIN, perhaps a PAUSE, one frame that ends it.
MAX_PIPE_BYTES = MAX_TEXT_FRAME + 3 * p.HEADER.size
# Children kept forked and layered ahead of time: two, so a burst of grades (a worker draining
# its queue) still finds one ready while the zygote forks the next.
PREFORK_DEPTH = 2
# A run starting within this long of the last one's end means the worker is busy: the children
# forked then skip their warm-up (a worker draining a queue starts its next grade at once).
BUSY_GAP_SECONDS = 0.01
# Busy too when, since the last run started, tasks of this machine waited for a CPU more than
# this share of the time (the kernel's pressure stall information, "some"): a warm-up then
# takes CPU the grades and the web need. In a burst beside the web, runs often start further
# apart than the gap above, while tasks wait for a CPU most of the time; at idle, rarely
# (bench/pipeline.py prints both shares; docs/performance.md). Where the file is missing (no
# PSI), the gap alone decides.
BUSY_CPU_STALL = 0.4
CPU_PRESSURE_FILE = "/proc/pressure/cpu"


class CpuPressure:
    """How much of the time since the last look tasks waited for a CPU (PSI's "some" total)."""

    def __init__(self, path: str | None = CPU_PRESSURE_FILE) -> None:
        self.path = path
        self._last: tuple[float, int] | None = None

    def _total_us(self) -> int | None:
        if self.path is None:
            return None
        try:
            with open(self.path, "rb") as f:
                return int(f.readline().rsplit(b"=", 1)[1])
        except (OSError, ValueError, IndexError):
            return None

    def stalled_share(self, now: float) -> float | None:
        """The share since the last call (None at the first, or without PSI)."""
        total, last = self._total_us(), self._last
        self._last = (now, total) if total is not None else None
        if total is None or last is None or now <= last[0]:
            return None
        return (total - last[1]) / 1e6 / (now - last[0])


# How often the results before a gate are looked at while the child computes them (see _peek).
PEEK_SECONDS = 0.0003
# Encoded request parts kept for reuse (see _part): one per kind of exercise is enough.
MAX_KEPT_PARTS = 8


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot start or failed its self-check: refuse to grade here."""


class _Broken(Exception):
    """The sandbox itself misbehaved during a run (our fault): INTERNAL, restart the zygote."""


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


@dataclass
class _Child:
    pid: int
    req_w: int
    res_r: int
    out_r: int
    area: int

    def close(self) -> None:
        # Idempotent: closing a number twice could close someone else's descriptor.
        for fd in (self.req_w, self.res_r, self.out_r, self.area):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.req_w = self.res_r = self.out_r = self.area = -1


@dataclass
class _Zygote:
    proc: subprocess.Popen[bytes]
    ctrl: socket.socket
    stderr: Any
    hello: dict[str, Any] = field(default_factory=dict)
    ready: list[_Child] = field(default_factory=list)
    spawning: int = 0
    exits: dict[int, dict[str, Any]] = field(default_factory=dict)
    dead: bool = False

    def alive(self) -> bool:
        return not self.dead and self.proc.poll() is None

    def send(self, msg: dict[str, Any]) -> None:
        try:
            self.ctrl.send(json.dumps(msg).encode())
        except OSError as e:
            self.dead = True
            raise _Broken(f"zygote control socket: {e}") from e

    def receive(self, timeout: float) -> dict[str, Any] | None:
        """One control message (recording children and exits), or None on timeout."""
        if not _poll([self.ctrl.fileno()], [], timeout)[0]:
            return None
        try:
            data, fds, _, _ = socket.recv_fds(self.ctrl, 65536, 4)
        except OSError as e:
            self.dead = True
            raise _Broken(f"zygote control socket: {e}") from e
        if not data:
            for fd in fds:
                os.close(fd)
            self.dead = True
            raise _Broken("zygote exited")
        msg = json.loads(data)
        if msg.get("op") == "child":
            if len(fds) != 4:
                for fd in fds:
                    os.close(fd)
                raise _Broken("zygote sent a child without its descriptors")
            self.spawning -= 1
            # A pid is reused only after the zygote reaped (and reported) its previous owner.
            self.exits.pop(msg["pid"], None)
            self.ready.append(_Child(msg["pid"], *fds))
        elif msg.get("op") == "exit":
            self.exits[msg["pid"]] = msg
        else:
            for fd in fds:
                os.close(fd)
        return msg

    def stderr_text(self) -> str:
        try:
            self.stderr.seek(0)
            return self.stderr.read()[-4000:].decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""


@dataclass
class _RunState:
    calls: Sequence[Call]
    entry_point: str
    results: list[CallResult] = field(default_factory=list)
    buf: bytearray = field(default_factory=bytearray)
    result_bytes: int = 0
    out: bytearray = field(default_factory=bytearray)
    out_total: int = 0
    begun: bool = False  # the child set its state and is about to run the student's code
    loaded: bool = False
    area_pos: int = p.AREA_HEADER.size  # how far the result area has been read and parsed
    gate: Gate | None = None
    paused: bool = False  # the child waits at the gate for our answer
    sent_early: bool = False  # the calls after the gate were sent before it got there
    stopped_at_gate: bool = False  # we answered no at the gate
    status: RunStatus | None = None
    message: str = ""
    # Output of the current call, waiting for its inputs_after frames.
    pending: np.ndarray | None = None
    pending_inputs: list[np.ndarray] = field(default_factory=list)
    pending_expect: int = 0


_READ_EVENTS = select.POLLIN | select.POLLHUP | select.POLLERR
_WRITE_EVENTS = select.POLLOUT | select.POLLHUP | select.POLLERR


def _poll(read: list[int], write: list[int], timeout: float) -> tuple[set[int], set[int]]:
    """Ready descriptors. poll, not select: a worker may hold descriptors above FD_SETSIZE."""
    poller = select.poll()
    for fd in read:
        poller.register(fd, select.POLLIN)
    for fd in write:
        poller.register(fd, select.POLLOUT)
    events = poller.poll(max(timeout, 0) * 1000)
    readable = {fd for fd, ev in events if ev & _READ_EVENTS and fd in read}
    writable = {fd for fd, ev in events if ev & _WRITE_EVENTS and fd in write}
    return readable, writable


def _array_count(call: Call) -> int:
    return sum(isinstance(a, np.ndarray) for a in (*call.args, *call.kwargs.values()))


class SandboxExecutor:
    """Runs student code in a warm, layered sandbox. Use from one thread at a time per instance
    (a lock serialises concurrent callers)."""

    def __init__(
        self,
        *,
        allow_no_landlock: bool | None = None,
        slot: int | None = None,
        start: bool = True,
    ) -> None:
        # The env default lets `manage.py grade` and tests work without Django settings; the
        # worker passes settings.SANDBOX_ALLOW_NO_LANDLOCK explicitly.
        if allow_no_landlock is None:
            allow_no_landlock = _env_flag(ALLOW_NO_LANDLOCK_ENV)
        self.allow_no_landlock = allow_no_landlock
        self._lock = threading.Lock()
        self._zygote: _Zygote | None = None
        self._checked = False
        self._closed = False
        self._parts: dict[tuple[int, ...], tuple[tuple[Call, ...], bytes]] = {}
        self._busy = False
        self._last_end = float("-inf")
        self.cpu_pressure = CpuPressure()
        try:
            self._slot = launcher.SlotLock(slot)
        except (OSError, launcher.LaunchError) as e:
            raise SandboxUnavailable(f"no sandbox slot: {e}") from e
        self._cgroup = launcher.pids_cgroup(self._slot.slot)
        self.slot = self._slot.slot
        self.zygote_starts = 0  # how often a zygote was (re)started: tests assert it stays 1
        self.uids = self._slot.uids
        if start:
            try:
                with self._lock:
                    self._start()
            except BaseException:
                self.close()
                raise

    # --- public -------------------------------------------------------------------------------

    def run(
        self,
        *,
        code: str,
        entry_point: str,
        calls: Sequence[Call],
        limits: Limits,
        while_running: Callable[[], None] | None = None,
        gate: Gate | None = None,
    ) -> RunResult:
        lim = L.clamp(limits)
        if gate is not None and not 0 < gate.after < len(calls):
            gate = None  # nothing on one side of it: a plain run
        # With a gate, the calls after it are sent only if the caller wants them (see _ask).
        first = calls[: gate.after] if gate is not None else calls
        request = self._encode(
            first, code=code, entry_point=entry_point, lim=lim, gated=gate is not None
        )
        with self._lock:
            if self._closed:
                raise RuntimeError("SandboxExecutor is closed")
            try:
                self._ensure_ready()
            except (SandboxUnavailable, OSError) as e:
                log.critical("sandbox: refusing to run (fail closed): %s", e)
                return RunResult(RunStatus.INTERNAL, [], M.MSG_INTERNAL)
            try:
                return self._run(request, entry_point, calls, lim, while_running, gate)
            except _Broken as e:
                log.error("sandbox: internal failure, restarting the zygote: %s", e)
                self._stop()
                return RunResult(RunStatus.INTERNAL, [], M.MSG_INTERNAL)

    def self_check(self) -> None:
        """Run escape probes through the sandbox; raise SandboxUnavailable if any succeeds."""
        with self._lock:
            self._checked = False
            self._ensure_ready()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._stop()
            self._slot.release()
            launcher.remove_cgroup(self._cgroup)

    @property
    def busy(self) -> bool:
        """Whether the last run started right after the one before, or while tasks queued for
        the CPU (the children forked then skip their warm-up)."""
        return self._busy

    @property
    def landlock_abi(self) -> int:
        return int(self._zygote.hello.get("landlock_abi", 0)) if self._zygote else 0

    # --- zygote lifecycle ---------------------------------------------------------------------

    def _ensure_ready(self) -> None:
        if self._zygote is None or not self._zygote.alive():
            if self._zygote is not None:
                log.warning("sandbox: zygote of slot %d died; restarting it", self.slot)
                self._stop()
            self._start()
        if not self._checked:
            self._run_self_check()

    def _config(self, ctrl_fd: int) -> dict[str, Any]:
        """What the zygote and its children are told (nothing secret: it is visible inside)."""
        return {
            "ctrl_fd": ctrl_fd,
            "uids": list(self._slot.uids),
            "allow_no_landlock": self.allow_no_landlock,
            "max_request_bytes": L.REQUEST_MAX_BYTES,
            "max_array_bytes": L.OUTPUT_ARRAY_MAX_BYTES,
            "area_bytes": AREA_BYTES,
            "max_error_chars": L.ERROR_TEXT_MAX_CHARS,
            "rlimits": {
                "nproc": L.RLIMIT_NPROC,
                "nofile": L.RLIMIT_NOFILE,
                "fsize": L.RLIMIT_FSIZE,
                "cpu_max": int(L.CPU_SECONDS.high),
                "memory_max_mb": int(L.MEMORY_MB.high),
            },
        }

    def _run_self_check(self) -> None:
        code = selfcheck.PROBE_CODE.format(project=str(PROJECT_ROOT), uids=list(self._slot.uids))
        lim = Limits(wall_seconds=10.0, cpu_seconds=5.0, memory_mb=256)
        calls = selfcheck.probe_calls()
        request = self._encode(calls, code=code, entry_point="probe", lim=lim)
        try:
            result = self._run(request, "probe", calls, lim)
        except _Broken as e:
            self._stop()
            raise SandboxUnavailable(f"self-check could not run: {e}") from e
        bad = selfcheck.failures(result, landlock=self.landlock_abi >= 1)
        if bad:
            for line in bad:
                log.critical("sandbox self-check FAILED: %s", line)
            self._stop()
            raise SandboxUnavailable("sandbox self-check failed: " + "; ".join(bad))
        self._checked = True
        log.info("sandbox: self-check passed (%d escape probes blocked)", len(calls))

    def _start(self) -> None:
        try:
            bwrap = launcher.find_bwrap()
        except launcher.LaunchError as e:
            raise SandboxUnavailable(str(e)) from e
        # A worker killed with -9 never ran close(): its groups of this slot stay behind, and
        # whatever it left running in ours would eat the new zygote's pids budget.
        launcher.cgroups_stale_remove(self.slot, keep=self._cgroup)
        launcher.cgroup_clear(self._cgroup)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = self._config(theirs.fileno())
        # bubblewrap reads its arguments from a pipe (--args): /proc/1/cmdline inside then
        # shows no host paths. The zygote's config goes over the control socket likewise.
        args_r, args_w = os.pipe()
        full = launcher.bwrap_argv(bwrap, ctrl_fd=theirs.fileno())
        split = full.index("--")
        os.write(args_w, b"".join(a.encode() + b"\0" for a in full[1:split]))
        os.close(args_w)
        ours.send(json.dumps(config).encode())
        argv = [bwrap, "--args", str(args_r), *full[split:]]  # the command stays on argv

        stderr = tempfile.TemporaryFile()  # noqa: SIM115  (lives as long as the zygote)
        try:
            proc = subprocess.Popen(  # noqa: S603  (fixed argv, no shell)
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                pass_fds=(theirs.fileno(), args_r),
                # No secrets of this process's environment may reach the sandbox.
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                start_new_session=True,
            )
        except OSError as e:
            ours.close()
            raise SandboxUnavailable(f"cannot start bubblewrap: {e}") from e
        finally:
            theirs.close()
            os.close(args_r)
        zygote = _Zygote(proc=proc, ctrl=ours, stderr=stderr)
        self._zygote = zygote
        self.zygote_starts += 1
        self._checked = False
        try:
            deadline = time.monotonic() + L.ZYGOTE_START_SECONDS
            msg = None
            while msg is None and time.monotonic() < deadline:
                msg = zygote.receive(deadline - time.monotonic())
        except _Broken as e:
            self._stop()
            raise SandboxUnavailable(f"zygote failed to start: {e}: {zygote.stderr_text()}") from e
        if msg is None or msg.get("op") != "hello":
            self._stop()
            detail = msg.get("msg") if msg else "timeout"
            log.critical("sandbox: zygote refused to start: %s", detail)
            raise SandboxUnavailable(f"zygote refused to start: {detail}")
        zygote.hello = msg
        launcher.join_cgroup(self._cgroup, proc.pid)  # before any child is forked
        abi = msg["landlock_abi"]
        if abi < 1:
            log.warning(
                "sandbox: Landlock is NOT available; running with the remaining layers only "
                "because %s is set",
                ALLOW_NO_LANDLOCK_ENV,
            )
        elif not (msg["landlock_net"] and msg["landlock_scoped"]):
            log.warning(
                "sandbox: Landlock ABI %d lacks TCP and/or signal scoping; seccomp covers them",
                abi,
            )
        log.info(
            "sandbox: zygote up for slot %d (uids %s, Landlock ABI %d, pids cgroup %s)",
            self.slot,
            self._slot.uids,
            abi,
            self._cgroup or "none",
        )
        self._prefork()

    def _stop(self) -> None:
        zygote, self._zygote = self._zygote, None
        self._checked = False
        if zygote is None:
            return
        for child in zygote.ready:
            child.close()
        with contextlib.suppress(OSError):
            zygote.ctrl.close()
        if zygote.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(zygote.proc.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                zygote.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            zygote.proc.wait(timeout=5)
        zygote.stderr.close()

    def _prefork(self) -> None:
        zygote = self._zygote
        # Busy: this run came right after the last one. The next will too, most likely, and
        # then the child's warm-up only adds CPU (see zygote.child_main).
        warm = not self._busy
        while zygote and zygote.alive() and len(zygote.ready) + zygote.spawning < PREFORK_DEPTH:
            zygote.send({"op": "spawn", "warm": warm})
            zygote.spawning += 1

    def _take_child(self) -> _Child:
        zygote = self._zygote
        assert zygote is not None
        # Exits of earlier children (answered early, then killed) are of no interest any more.
        zygote.exits.clear()
        self._prefork()
        deadline = time.monotonic() + L.CHILD_READY_SECONDS
        while not zygote.ready:
            timed_out = time.monotonic() > deadline
            if (
                timed_out or zygote.receive(deadline - time.monotonic()) is None
            ) and not zygote.ready:
                raise _Broken("no child from the zygote in time")
        child = zygote.ready.pop(0)
        # The child says READY only after every layer is applied and verified.
        r, _ = _poll([child.res_r], [], max(deadline - time.monotonic(), 0.5))
        head = os.read(child.res_r, p.HEADER.size) if r else b""
        if len(head) != p.HEADER.size:
            child.close()
            raise _Broken("child did not report ready")
        kind, length = p.HEADER.unpack(head)
        if kind != p.READY or length != 0:
            detail = os.read(child.res_r, min(length, 4096)).decode("utf-8", "replace")
            child.close()
            log.critical("sandbox: a layer could not be applied, nothing ran: %s", detail)
            raise _Broken(f"layer failed: {detail}")
        return child

    # --- one run ----------------------------------------------------------------------------

    @staticmethod
    def _encode(
        calls: Sequence[Call],
        *,
        code: str | None = None,
        entry_point: str = "",
        lim: Limits | None = None,
        gated: bool = False,
    ) -> bytes:
        """A request, or with no ``code`` the part of one sent at the gate (calls only)."""
        arrays: list[bytes | memoryview] = []

        def spec(value: Arg) -> dict[str, Any]:
            if isinstance(value, np.ndarray):
                # Trusted inputs cross as raw C-order bytes described in the JSON header:
                # parsing .npy in the child cost a large share of a grade (docs/performance.md).
                if value.dtype.kind not in "biuf" or value.dtype.hasobject:
                    raise TypeError(f"input arrays must be numeric, not {value.dtype}")
                # One copy in all (the final join): a view when already C-contiguous.
                arrays.append(memoryview(value) if value.flags.c_contiguous else value.tobytes())
                return {"a": len(arrays) - 1, "dtype": value.dtype.str, "shape": value.shape}
            if isinstance(value, np.generic):
                value = value.item()
            if value is None or isinstance(value, bool | int | float):
                return {"v": value}
            raise TypeError(f"call arguments must be arrays or scalars, not {type(value)}")

        header: dict[str, Any] = {
            "calls": [
                {
                    "args": [spec(a) for a in c.args],
                    "kwargs": {k: spec(v) for k, v in c.kwargs.items()},
                    "return_inputs": c.return_inputs,
                }
                for c in calls
            ],
            "n_arrays": len(arrays),
        }
        head: list[tuple[bytes, bytes]] = []
        if code is not None:
            assert lim is not None
            header.update(
                entry_point=entry_point,
                cpu_seconds=L.cpu_rlimit_seconds(lim),
                memory_mb=int(lim.memory_mb),
                gate=gated,
            )
            head = [(p.REQ_CODE, code.encode("utf-8", "replace"))]
        parts: list[bytes | memoryview] = [b""]  # the length prefix, once known
        for kind, payload in (
            (p.REQ_HEADER, json.dumps(header).encode()),
            *head,
            *((p.REQ_ARRAY, a) for a in arrays),
        ):
            parts += (
                p.HEADER.pack(
                    kind, payload.nbytes if isinstance(payload, memoryview) else len(payload)
                ),
                payload,
            )
        size = sum(part.nbytes if isinstance(part, memoryview) else len(part) for part in parts)
        if size > L.REQUEST_MAX_BYTES:
            raise ValueError(f"request of {size} bytes exceeds {L.REQUEST_MAX_BYTES}")
        parts[0] = p.REQUEST_LENGTH.pack(size)
        return b"".join(parts)

    def _run(
        self,
        request: bytes,
        entry_point: str,
        calls: Sequence[Call],
        lim: Limits,
        while_running: Callable[[], None] | None = None,
        gate: Gate | None = None,
    ) -> RunResult:
        zygote = self._zygote
        assert zygote is not None
        started = time.monotonic()
        stalled = self.cpu_pressure.stalled_share(started)
        self._busy = started - self._last_end < BUSY_GAP_SECONDS or (
            stalled is not None and stalled > BUSY_CPU_STALL
        )
        child = self._take_child()
        state = _RunState(calls=calls, entry_point=entry_point, gate=gate)
        try:
            killed_for = self._drive(zygote, child, request, state, lim, while_running)
            # Killed or dead without a final frame: the calls it finished are in the area.
            if not self._collect(state, child) and killed_for is None and state.status is None:
                killed_for = RunStatus.BAD_OUTPUT
        finally:
            child.close()
            self._last_end = time.monotonic()
        # Next grade's child: forked now, while the caller judges this one.
        self._prefork()
        return self._result(state, killed_for, lim)

    def _drive(
        self,
        zygote: _Zygote,
        child: _Child,
        request: bytes,
        state: _RunState,
        lim: Limits,
        while_running: Callable[[], None] | None = None,
    ) -> RunStatus | None:
        """Feed the child and read its replies until it answers, dies or is killed.

        Returns the status we killed it for (wall or output limit), if we did. Once the
        request is written, ``while_running`` runs here while the child computes: the child
        writes its outputs to the result area, so it never waits for us meanwhile (the wall
        clock still counts from the start).
        """
        os.set_blocking(child.req_w, False)
        os.set_blocking(child.res_r, False)
        os.set_blocking(child.out_r, False)
        to_write = memoryview(request)
        deadline = time.monotonic() + lim.wall_seconds
        res_open = out_open = True
        exit_info: dict[str, Any] | None = None
        while True:
            if state.status is not None:
                # Answered (DONE or a terminal frame): everything it printed was flushed first.
                self._drain_stdout(child, state)
                self._kill(zygote, child)
                return None
            if exit_info is None:
                exit_info = zygote.exits.pop(child.pid, None)
            if exit_info is not None and not res_open and not out_open:
                state.message = json.dumps(exit_info)  # decoded by _result
                return None
            now = time.monotonic()
            if now >= deadline:
                if exit_info is not None:  # already dead; its pipes just were not drained
                    state.message = json.dumps(exit_info)
                    return None
                self._kill(zygote, child, wait=True)
                return RunStatus.WALL_LIMIT
            rlist = [zygote.ctrl.fileno()]
            if res_open:
                rlist.append(child.res_r)
            if out_open:
                rlist.append(child.out_r)
            wlist = [child.req_w] if to_write else []
            # Before the gate, look at the area now and then: the caller judges each check as
            # soon as its calls are done, so little is left to judge when the child pauses.
            peek = (
                state.gate is not None
                and state.gate.progress is not None
                and not state.paused
                and not to_write
                and while_running is None
            )
            r, w = _poll(
                rlist, wlist, min(deadline - now, PEEK_SECONDS) if peek else deadline - now
            )
            if peek and not r:
                wanted = self._peek(state, child)
                if wanted is None:
                    self._kill(zygote, child, wait=True)
                    return RunStatus.BAD_OUTPUT
                if wanted and not state.sent_early:
                    # The caller already wants the calls after the gate (a check failed): send
                    # them now, so the child finds them there instead of waiting for us.
                    assert state.gate is not None
                    to_write = memoryview(self._part(state.calls[state.gate.after :]))
                    state.sent_early = True
            if w:
                try:
                    n = os.write(child.req_w, to_write[: 1 << 20])
                    to_write = to_write[n:]
                except BlockingIOError:
                    pass
                except BrokenPipeError:
                    to_write = memoryview(b"")  # it died before reading: the exit tells why
                if not to_write:
                    # With a gate, it stays open for the answer there (unless already sent).
                    if state.gate is None or state.sent_early:
                        os.close(child.req_w)
                        child.req_w = -1
                    if while_running is not None:
                        self._while_running(while_running)
                        while_running = None
            if child.out_r in r:
                chunk = self._read(child.out_r)
                if chunk is None:
                    out_open = False
                else:
                    self._add_stdout(state, chunk)
                    if state.out_total > L.STDOUT_KILL_BYTES:
                        self._kill(zygote, child, wait=True)
                        return RunStatus.OUTPUT_LIMIT
            if child.res_r in r:
                chunk = self._read(child.res_r)
                if chunk is None:
                    res_open = False
                else:
                    if not self._pipe_chunk(state, child, chunk):
                        self._kill(zygote, child, wait=True)
                        return RunStatus.BAD_OUTPUT
                    if state.paused and state.status is None:
                        gate = state.gate
                        assert gate is not None
                        # Asked even when the rest was sent early: the caller sees every
                        # result before the gate (and then cannot take the rest back).
                        if self._ask(state) or state.sent_early:
                            # It goes on: the rest of the request, then no second gate. The
                            # caller's work meanwhile runs once the rest is written.
                            if not state.sent_early:
                                to_write = memoryview(self._part(state.calls[gate.after :]))
                            if to_write:
                                while_running = gate.meanwhile
                            elif gate.meanwhile is not None:
                                self._while_running(gate.meanwhile)
                            state.paused, state.gate = False, None
                        else:
                            # Ends here: the results so far.
                            state.status, state.stopped_at_gate = RunStatus.OK, True
            if zygote.ctrl.fileno() in r:
                zygote.receive(0)

    def _peek(self, state: _RunState, child: _Child) -> bool | None:
        """Results so far to the gate's ``progress`` (if there are new ones): whether the caller
        already wants the calls after the gate; None if the area is malformed."""
        assert state.gate is not None and state.gate.progress is not None
        before = len(state.results)
        if not self._collect(state, child):
            return None
        if len(state.results) > before:
            try:
                return bool(state.gate.progress(state.results[: state.gate.after]))
            except Exception:  # the caller's own work: it judges again at the gate
                log.exception("sandbox: the gate's progress failed")
                state.gate = replace(state.gate, progress=None)
        return False

    def _ask(self, state: _RunState) -> bool:
        """The child waits at the gate: does the caller want the calls after it?"""
        assert state.gate is not None
        try:
            return bool(state.gate.go_on(state.results[: state.gate.after]))
        except Exception:  # the caller's own (trusted) check: run everything rather than guess
            log.exception("sandbox: the gate's check failed; running every call")
            return True

    def _part(self, calls: Sequence[Call]) -> bytes:
        """The part of a request after its gate. It holds the diagnosis's fixed inputs, the same
        calls in every grade, so its encoding is kept (keyed by the calls, held so that their
        ids stay theirs; a few entries at most, one per kind of exercise)."""
        key = tuple(map(id, calls))
        kept = self._parts.get(key)
        if kept is None:
            kept = (tuple(calls), self._encode(calls))
            frozen = all(
                not a.flags.writeable
                for c in calls
                for a in (*c.args, *c.kwargs.values())
                if isinstance(a, np.ndarray)
            )
            if frozen and len(self._parts) < MAX_KEPT_PARTS:  # else it could change under us
                self._parts[key] = kept
        return kept[1]

    @staticmethod
    def _while_running(work: Callable[[], None]) -> None:
        try:
            work()
        except Exception:  # the caller's own (trusted) work: it redoes it later if needed
            log.exception("sandbox: the work done while the child ran failed")

    @staticmethod
    def _read(fd: int) -> bytes | None:
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:
            return b""
        return chunk or None

    @staticmethod
    def _add_stdout(state: _RunState, chunk: bytes) -> None:
        state.out_total += len(chunk)
        room = L.STDOUT_KEEP_BYTES - len(state.out)
        if room > 0:
            state.out += chunk[:room]

    def _drain_stdout(self, child: _Child, state: _RunState) -> None:
        while state.out_total <= L.STDOUT_KILL_BYTES:
            chunk = self._read(child.out_r)
            if not chunk:
                return
            self._add_stdout(state, chunk)

    def _kill(self, zygote: _Zygote, child: _Child, wait: bool = False) -> None:
        zygote.send({"op": "kill", "pid": child.pid})
        if not wait:
            return
        deadline = time.monotonic() + L.KILL_GRACE_SECONDS
        while child.pid not in zygote.exits:
            if time.monotonic() > deadline:
                raise _Broken(f"child {child.pid} did not die after SIGKILL")
            zygote.receive(deadline - time.monotonic())
        zygote.exits.pop(child.pid, None)

    def _pipe_chunk(self, state: _RunState, child: _Child, chunk: bytes) -> bool:
        """Take what the result pipe gave; False if the child broke the protocol.

        Parsed before the size is judged: BEGIN comes first, so a child that floods the pipe
        once its run began is the student's bad output, never a run that did not begin."""
        state.result_bytes += len(chunk)
        state.buf += chunk
        parsed = self._parse_pipe(state, child)
        return parsed and state.result_bytes <= MAX_PIPE_BYTES

    def _parse_pipe(self, state: _RunState, child: _Child) -> bool:
        """Consume complete frames from the result pipe: only frames that end a run come this
        way, and each is read after the result area it concludes. False on any violation."""
        buf = state.buf
        pos = 0
        ok = True
        while len(buf) - pos >= p.HEADER.size and state.status is None:
            kind, length = p.HEADER.unpack_from(buf, pos)
            if kind not in p.PIPE_KINDS or length > MAX_TEXT_FRAME:
                ok = False
                break
            if len(buf) - pos - p.HEADER.size < length:
                break
            payload = bytes(buf[pos + p.HEADER.size : pos + p.HEADER.size + length])
            pos += p.HEADER.size + length
            if not self._collect(state, child) or not self._safe_frame(state, kind, payload):
                ok = False
                break
        del buf[:pos]
        return ok

    def _collect(self, state: _RunState, child: _Child) -> bool:
        """Read what the child's result area gained since the last read (a copy: the child may
        still be scribbling) and parse its frames as untrusted bytes. False if malformed."""
        if not state.begun:
            # What the area holds was written after BEGIN, still unread in the pipe: read then.
            return True
        try:
            (end,) = p.AREA_HEADER.unpack(os.pread(child.area, p.AREA_HEADER.size, 0))
            if end == 0:  # the child never wrote: nothing loaded
                return True
            if not state.area_pos <= end <= AREA_BYTES:
                return False  # out of bounds, or shrunk below what we already read
            data = os.pread(child.area, end - state.area_pos, state.area_pos)
        except OSError:
            return False
        if len(data) != end - state.area_pos:
            return False
        state.area_pos = end
        pos = 0
        while pos < len(data):
            if len(data) - pos < p.HEADER.size:
                return False
            kind, length = p.HEADER.unpack_from(data, pos)
            limit = MAX_RESULT_FRAME if kind in (p.OUTPUT, p.INPUT_AFTER) else MAX_TEXT_FRAME
            start = pos + p.HEADER.size
            if kind not in p.AREA_KINDS or length > limit or start + length > len(data):
                return False
            if not self._safe_frame(state, kind, data[start : start + length]):
                return False
            pos = start + length
        return True

    def _safe_frame(self, state: _RunState, kind: bytes, payload: bytes) -> bool:
        try:
            return self._frame(state, kind, payload)
        except Exception:  # whatever the child sent (a JSON bomb, odd types): its fault
            log.info("sandbox: malformed %r frame from the child", kind, exc_info=True)
            return False

    def _frame(self, state: _RunState, kind: bytes, payload: bytes) -> bool:
        n_calls = len(state.calls)
        if kind == p.BEGIN and not state.begun:
            state.begun = True
        elif kind == p.LAYER_FAILED and not state.begun:
            state.status = RunStatus.INTERNAL
            state.message = payload.decode("utf-8", "replace")[:500]
        elif not state.begun:
            return False
        elif kind == p.SYNTAX and not state.loaded:
            info = json.loads(payload)
            line, msg = info["line"], str(info["msg"])[:500]
            state.status = RunStatus.SYNTAX_ERROR
            state.message = (
                M.MSG_SYNTAX_ERROR.format(line=int(line), msg=msg)
                if line is not None
                else M.MSG_SYNTAX_ERROR_NO_LINE.format(msg=msg)
            )
        elif kind == p.MISSING and not state.loaded:
            state.status = RunStatus.MISSING_ENTRY_POINT
        elif kind == p.IMPORT and not state.loaded:
            state.status = RunStatus.IMPORT_ERROR
            tb = payload.decode("utf-8", "replace")[-L.ERROR_TEXT_MAX_CHARS :]
            state.message = M.MSG_IMPORT_ERROR.format(traceback=tb)
        elif kind == p.MEMORY:
            state.status = RunStatus.MEMORY_LIMIT
        elif kind == p.OVERFLOW:
            state.status = RunStatus.BAD_OUTPUT
        elif kind == p.LOADED and not state.loaded:
            state.loaded = True
        elif not state.loaded:
            return False
        elif kind == p.PAUSE and state.gate is not None and not state.paused and self._at(state):
            # Before the pending check: once the rest was sent early, the area may already hold
            # half of a call past the gate (its output, not yet its inputs_after frames).
            state.paused = True
        elif state.pending is not None:
            if kind != p.INPUT_AFTER:
                return False
            state.pending_inputs.append(npy.loads(payload, L.OUTPUT_ARRAY_MAX_BYTES))
            if len(state.pending_inputs) == state.pending_expect:
                self._finish_pending(state)
        elif kind == p.OUTPUT and len(state.results) < n_calls:
            arr = npy.loads(payload, L.OUTPUT_ARRAY_MAX_BYTES)
            call = state.calls[len(state.results)]
            expect = _array_count(call) if call.return_inputs else 0
            if expect:
                state.pending, state.pending_expect, state.pending_inputs = arr, expect, []
            else:
                state.results.append(CallResult(output=arr))
        elif kind == p.CALL_ERROR and len(state.results) < n_calls:
            state.results.append(CallResult(error=self._call_error(json.loads(payload))))
        elif kind == p.DONE and len(state.results) == n_calls:
            state.status = RunStatus.OK
        else:
            return False
        return True

    @staticmethod
    def _at(state: _RunState) -> bool:
        """Whether the results read so far fit a PAUSE: exactly the calls before the gate, or,
        once the rest was sent early, possibly some after it too (the child read the rest at
        the gate and went on before we read the pipe: the area shows what it did since)."""
        assert state.gate is not None
        done = len(state.results)
        if state.sent_early:
            return done >= state.gate.after
        return done == state.gate.after and state.pending is None

    @staticmethod
    def _finish_pending(state: _RunState) -> None:
        state.results.append(
            CallResult(output=state.pending, inputs_after=tuple(state.pending_inputs))
        )
        state.pending, state.pending_inputs, state.pending_expect = None, [], 0

    @staticmethod
    def _call_error(info: dict[str, Any]) -> str:
        code = info.get("code")
        if code == "exception":
            tb = str(info["traceback"])[-L.ERROR_TEXT_MAX_CHARS :]
            return M.MSG_CALL_EXCEPTION.format(traceback=tb)
        if code == "not-numeric":
            return M.MSG_NOT_NUMERIC.format(
                type=str(info["type"])[:100], dtype=str(info["dtype"])[:100]
            )
        if code == "too-large":
            return M.MSG_OUTPUT_TOO_LARGE.format(
                nbytes=int(info["nbytes"]), max=L.OUTPUT_ARRAY_MAX_BYTES
            )
        raise ValueError("unknown call error")

    def _result(self, state: _RunState, killed_for: RunStatus | None, lim: Limits) -> RunResult:
        stdout = bytes(state.out).decode("utf-8", "replace")
        if state.out_total > L.STDOUT_KEEP_BYTES:
            stdout += STDOUT_TRUNCATED.format(kib=L.STDOUT_KEEP_BYTES // 1024)
        status = killed_for or state.status
        message = ""
        if not state.begun:
            # Whatever ended it, none of the student's code ran: the sandbox failed, not them
            # (retried elsewhere, never charged).
            log.error(
                "sandbox: a child of slot %d could not start its run (%s): %s",
                self.slot,
                status or "exited",
                state.message,
            )
            return RunResult(RunStatus.INTERNAL, [], M.MSG_INTERNAL)
        if status is None:
            # It died before answering: the exit status tells why.
            info = json.loads(state.message)
            status, message = self._from_exit(info, lim)
        elif status == RunStatus.OK:
            message = ""
        elif status in (RunStatus.SYNTAX_ERROR, RunStatus.IMPORT_ERROR):
            message = state.message
        elif status == RunStatus.MISSING_ENTRY_POINT:
            message = M.MSG_MISSING_ENTRY_POINT.format(entry_point=state.entry_point)
        elif status == RunStatus.MEMORY_LIMIT:
            message = M.MSG_MEMORY_LIMIT.format(mb=lim.memory_mb)
        elif status == RunStatus.WALL_LIMIT:
            message = M.MSG_WALL_LIMIT.format(seconds=lim.wall_seconds)
        elif status == RunStatus.OUTPUT_LIMIT:
            message = M.MSG_OUTPUT_LIMIT.format(kib=L.STDOUT_KILL_BYTES // 1024)
        elif status == RunStatus.BAD_OUTPUT:
            message = M.MSG_BAD_OUTPUT
        if state.pending is not None:
            self._finish_pending(state)
        if state.stopped_at_gate and state.gate is not None:
            # We ended it at the gate: whatever the child wrote after the PAUSE is not wanted.
            del state.results[state.gate.after :]
        return RunResult(status=status, calls=state.results, message=message, stdout=stdout)

    @staticmethod
    def _from_exit(info: dict[str, Any], lim: Limits) -> tuple[RunStatus, str]:
        cpu_limit = L.cpu_rlimit_seconds(lim)
        sig = info.get("signal")
        if sig is not None:
            # RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL at the hard one (if SIGXCPU was
            # ignored). We did not send this SIGKILL (we would have said why).
            if sig == signal.SIGXCPU or (
                sig == signal.SIGKILL and info.get("cpu", 0) >= cpu_limit - 0.05
            ):
                return RunStatus.CPU_LIMIT, M.MSG_CPU_LIMIT.format(seconds=cpu_limit)
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = str(sig)
            return RunStatus.SIGNALED, M.MSG_SIGNALED.format(signal=name)
        return RunStatus.EXITED, M.MSG_EXITED.format(code=info.get("code"))
