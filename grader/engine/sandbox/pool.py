"""The zygote of one worker slot and the children it keeps forked ahead of time.

``ChildPool`` starts the zygote under bubblewrap (launcher.py) in the slot's pids cgroup, asks
it for children, hands out one child per run (each applied and verified every layer before it
says READY) and kills children through it. It never encodes a request or reads a result.
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
import time
from dataclasses import dataclass, field
from typing import Any

from grader.engine import limits as L
from grader.engine.sandbox import launcher
from grader.engine.sandbox.inside import protocol as p

log = logging.getLogger("grader.engine.sandbox")

ALLOW_NO_LANDLOCK_ENV = "SANDBOX_ALLOW_NO_LANDLOCK"
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


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot start or failed its self-check: refuse to grade here."""


class Broken(Exception):
    """The sandbox itself misbehaved during a run (our fault): INTERNAL, restart the zygote."""


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


_READ_EVENTS = select.POLLIN | select.POLLHUP | select.POLLERR
_WRITE_EVENTS = select.POLLOUT | select.POLLHUP | select.POLLERR


def fds_poll(read: list[int], write: list[int], timeout: float) -> tuple[set[int], set[int]]:
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


@dataclass
class Child:
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
class Zygote:
    proc: subprocess.Popen[bytes]
    ctrl: socket.socket
    stderr: Any
    hello: dict[str, Any] = field(default_factory=dict)
    ready: list[Child] = field(default_factory=list)
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
            raise Broken(f"zygote control socket: {e}") from e

    def receive(self, timeout: float) -> dict[str, Any] | None:
        """One control message (recording children and exits), or None on timeout."""
        if not fds_poll([self.ctrl.fileno()], [], timeout)[0]:
            return None
        try:
            data, fds, _, _ = socket.recv_fds(self.ctrl, 65536, 4)
        except OSError as e:
            self.dead = True
            raise Broken(f"zygote control socket: {e}") from e
        if not data:
            for fd in fds:
                os.close(fd)
            self.dead = True
            raise Broken("zygote exited")
        msg = json.loads(data)
        if msg.get("op") == "child":
            if len(fds) != 4:
                for fd in fds:
                    os.close(fd)
                raise Broken("zygote sent a child without its descriptors")
            self.spawning -= 1
            # A pid is reused only after the zygote reaped (and reported) its previous owner.
            self.exits.pop(msg["pid"], None)
            self.ready.append(Child(msg["pid"], *fds))
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


class ChildPool:
    """One slot's zygote and its children forked ahead. Not thread-safe: the executor's lock
    serialises its callers."""

    def __init__(self, slot: int | None) -> None:
        try:
            self._slot = launcher.SlotLock(slot)
        except (OSError, launcher.LaunchError) as e:
            raise SandboxUnavailable(f"no sandbox slot: {e}") from e
        self.cgroup = launcher.pids_cgroup(self._slot.slot)
        self.slot = self._slot.slot
        self.uids = self._slot.uids
        self.zygote: Zygote | None = None
        self.starts = 0  # how often a zygote was (re)started: tests assert it stays 1
        self.busy = False
        self.cpu_pressure = CpuPressure()
        self._last_end = float("-inf")

    def alive(self) -> bool:
        return self.zygote is not None and self.zygote.alive()

    def start(self, config: dict[str, Any]) -> Zygote:
        """A new zygote, told ``config`` (plus its control descriptor), children on the way."""
        try:
            bwrap = launcher.find_bwrap()
        except launcher.LaunchError as e:
            raise SandboxUnavailable(str(e)) from e
        # A worker killed with -9 never ran close(): its groups of this slot stay behind, and
        # whatever it left running in ours would eat the new zygote's pids budget.
        launcher.cgroups_stale_remove(self.slot, keep=self.cgroup)
        launcher.cgroup_clear(self.cgroup)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {"ctrl_fd": theirs.fileno(), **config}
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
        zygote = Zygote(proc=proc, ctrl=ours, stderr=stderr)
        self.zygote = zygote
        self.starts += 1
        try:
            deadline = time.monotonic() + L.ZYGOTE_START_SECONDS
            msg = None
            while msg is None and time.monotonic() < deadline:
                msg = zygote.receive(deadline - time.monotonic())
        except Broken as e:
            self.stop()
            raise SandboxUnavailable(f"zygote failed to start: {e}: {zygote.stderr_text()}") from e
        if msg is None or msg.get("op") != "hello":
            self.stop()
            detail = msg.get("msg") if msg else "timeout"
            log.critical("sandbox: zygote refused to start: %s", detail)
            raise SandboxUnavailable(f"zygote refused to start: {detail}")
        zygote.hello = msg
        launcher.join_cgroup(self.cgroup, proc.pid)  # before any child is forked
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
            self.uids,
            abi,
            self.cgroup or "none",
        )
        self.prefork()
        return zygote

    def stop(self) -> None:
        zygote, self.zygote = self.zygote, None
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

    def release(self) -> None:
        """The zygote stopped, the slot and its cgroup given back."""
        self.stop()
        self._slot.release()
        launcher.remove_cgroup(self.cgroup)

    def prefork(self) -> None:
        zygote = self.zygote
        # Busy: this run came right after the last one. The next will too, most likely, and
        # then the child's warm-up only adds CPU (see zygote.child_main).
        warm = not self.busy
        while zygote and zygote.alive() and len(zygote.ready) + zygote.spawning < PREFORK_DEPTH:
            zygote.send({"op": "spawn", "warm": warm})
            zygote.spawning += 1

    def take(self) -> Child:
        """A child that applied every layer and waits for its request."""
        zygote = self.zygote
        assert zygote is not None
        started = time.monotonic()
        stalled = self.cpu_pressure.stalled_share(started)
        self.busy = started - self._last_end < BUSY_GAP_SECONDS or (
            stalled is not None and stalled > BUSY_CPU_STALL
        )
        # Exits of earlier children (answered early, then killed) are of no interest any more.
        zygote.exits.clear()
        self.prefork()
        deadline = time.monotonic() + L.CHILD_READY_SECONDS
        while not zygote.ready:
            timed_out = time.monotonic() > deadline
            if (
                timed_out or zygote.receive(deadline - time.monotonic()) is None
            ) and not zygote.ready:
                raise Broken("no child from the zygote in time")
        child = zygote.ready.pop(0)
        # The child says READY only after every layer is applied and verified.
        r, _ = fds_poll([child.res_r], [], max(deadline - time.monotonic(), 0.5))
        head = os.read(child.res_r, p.HEADER.size) if r else b""
        if len(head) != p.HEADER.size:
            child.close()
            raise Broken("child did not report ready")
        kind, length = p.HEADER.unpack(head)
        if kind != p.READY or length != 0:
            detail = os.read(child.res_r, min(length, 4096)).decode("utf-8", "replace")
            child.close()
            log.critical("sandbox: a layer could not be applied, nothing ran: %s", detail)
            raise Broken(f"layer failed: {detail}")
        return child

    def done(self, child: Child) -> None:
        """The run of ``child`` is over: its descriptors closed, the next child on the way
        (forked now, while the caller judges this run)."""
        child.close()
        self._last_end = time.monotonic()
        self.prefork()

    def kill(self, child: Child, wait: bool = False) -> None:
        zygote = self.zygote
        assert zygote is not None
        zygote.send({"op": "kill", "pid": child.pid})
        if not wait:
            return
        deadline = time.monotonic() + L.KILL_GRACE_SECONDS
        while child.pid not in zygote.exits:
            if time.monotonic() > deadline:
                raise Broken(f"child {child.pid} did not die after SIGKILL")
            zygote.receive(deadline - time.monotonic())
        zygote.exits.pop(child.pid, None)
