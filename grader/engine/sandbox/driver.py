"""One run in one child, driven by the caller: ``SandboxRun``.

It writes the request, reads the child's frames (codec.py) and what the code printed, and
enforces the wall clock and the output limit. It returns to its caller when the request is
written (``start``), when the calls sent so far are answered or the run ended (``wait``), and
writes a second phase when asked (``more``). It never calls back into the caller: whatever
the caller does between those steps, the child computes meanwhile, its outputs going to the
result area, so it never waits for us.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from grader.engine import limits as L
from grader.engine.executors.base import Call, Limits, RunResult, RunStatus
from grader.engine.sandbox import codec
from grader.engine.sandbox import messages as M
from grader.engine.sandbox.pool import Broken, Child, ChildPool, fds_poll

log = logging.getLogger("grader.engine.sandbox")

# How often the result area is read while a caller waits for part of the calls (the child
# writes there without waking us: a run costs two wake-ups, not one per call).
PEEK_SECONDS = 0.0003


class SandboxRun:
    """A run of one request in one fresh child. ``on_end`` (the executor's) is told once the
    run is over: ``broken`` if the sandbox itself failed."""

    def __init__(
        self,
        pool: ChildPool,
        request: bytes,
        calls: Sequence[Call],
        *,
        entry_point: str,
        lim: Limits,
        second_phase: bool,
        parts: codec.PartCache | None = None,
        on_end: Callable[[bool], None] | None = None,
    ) -> None:
        self._pool, self._lim, self._parts, self._on_end = pool, lim, parts, on_end
        self._state = codec.RunState(
            calls=list(calls), entry_point=entry_point, second_phase=second_phase
        )
        self._result: RunResult | None = None
        self._child: Child | None = None
        self._killed_for: RunStatus | None = None
        self._exit: dict[str, Any] | None = None
        self._res_open = self._out_open = True
        self._to_write = memoryview(request)
        self._ended = False
        self.failure: str | None = None  # why the sandbox itself failed this run, if it did
        try:
            self._child = pool.take()
            self._deadline = time.monotonic() + lim.wall_seconds
            for fd in (self._child.req_w, self._child.res_r, self._child.out_r):
                os.set_blocking(fd, False)
            self._step(until_written=True)
        except Broken as e:
            self._broken(e)

    # --- the caller's steps -------------------------------------------------------------------

    def wait(self, at_least: int | None = None) -> RunResult:
        """Every call sent so far answered (or, with ``at_least``, that many), or the run's
        end: the results so far."""
        state = self._state
        if at_least is not None and len(state.results) >= at_least:
            return self._so_far()
        if self._result is None and not state.paused:
            try:
                self._step(until_written=False, at_least=at_least)
            except Broken as e:
                self._broken(e)
        return self._so_far()

    def _so_far(self) -> RunResult:
        if self._result is not None:
            return self._result
        state = self._state
        return RunResult(RunStatus.OK, list(state.results), "", codec.stdout_text(state))

    def more(self, calls: Sequence[Call]) -> None:
        """The second phase: ``calls`` sent to the child waiting after the first."""
        state = self._state
        if self._result is not None or not state.paused or not state.second_phase:
            raise RuntimeError("this run takes no more calls now")
        part = self._parts.get(calls) if self._parts is not None else codec.request_encode(calls)
        state.calls += calls
        state.paused, state.second_phase = False, False
        self._to_write = memoryview(part)
        try:
            self._step(until_written=True)
        except Broken as e:
            self._broken(e)

    def close(self) -> None:
        """Ends the run (a child still waiting for a second phase is killed)."""
        if self._ended:
            return
        try:
            if self._result is None:
                self._state.status = RunStatus.OK  # not wanted: the results so far stand
                self._step(until_written=False)
        except Broken as e:
            self._broken(e)
        finally:
            if not self._ended:  # something unexpected failed: start afresh
                self._broken(Broken("the run could not be ended cleanly"))

    def __enter__(self) -> SandboxRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- driving ----------------------------------------------------------------------------

    def _broken(self, error: Broken) -> None:
        log.error("sandbox: internal failure, restarting the zygote: %s", error)
        self.failure = str(error)
        if self._child is not None:
            self._child.close()
        self._result = RunResult(RunStatus.INTERNAL, [], M.MSG_INTERNAL)
        self._end(broken=True)

    def _end(self, *, broken: bool = False) -> None:
        if not self._ended:
            self._ended = True
            if self._on_end is not None:
                self._on_end(broken)

    def _finish(self) -> None:
        """The run is over: what the area holds is read, the child's descriptors closed."""
        child, state = self._child, self._state
        assert child is not None
        try:
            # Killed or dead without a final frame: the calls it finished are in the area.
            collected = codec.area_collect(state, child.area)
            if not collected and self._killed_for is None and state.status is None:
                self._killed_for = RunStatus.BAD_OUTPUT
        finally:
            self._pool.done(child)
        self._result = codec.run_result(state, self._killed_for, self._lim, self._pool.slot)
        self._end()

    def _kill(self, status: RunStatus) -> None:
        assert self._child is not None
        self._pool.kill(self._child, wait=True)
        self._killed_for = status
        self._finish()

    def _step(self, *, until_written: bool, at_least: int | None = None) -> None:
        """Feed the child and read its replies: until the request is written (or, with
        ``until_written`` False, the calls sent so far are answered, or ``at_least`` of them),
        or the run ends."""
        child, state, zygote = self._child, self._state, self._pool.zygote
        assert child is not None and zygote is not None
        while True:
            if state.status is not None:
                # Answered (DONE or a terminal frame): everything it printed was flushed first.
                self._drain_stdout()
                self._pool.kill(child)
                self._finish()
                return
            if until_written and not self._to_write:
                return
            if state.paused:
                self._drain_stdout()
                return
            if at_least is not None and len(state.results) >= at_least:
                return
            if self._exit is None:
                self._exit = zygote.exits.pop(child.pid, None)
            if self._exit is not None and not self._res_open and not self._out_open:
                state.message = json.dumps(self._exit)  # decoded by codec.run_result
                self._finish()
                return
            now = time.monotonic()
            if now >= self._deadline:
                if self._exit is not None:  # already dead; its pipes just were not drained
                    state.message = json.dumps(self._exit)
                    self._finish()
                    return
                self._kill(RunStatus.WALL_LIMIT)
                return
            rlist = [zygote.ctrl.fileno()]
            if self._res_open:
                rlist.append(child.res_r)
            if self._out_open:
                rlist.append(child.out_r)
            wlist = [child.req_w] if self._to_write else []
            peek = at_least is not None and not self._to_write
            r, w = fds_poll(
                rlist,
                wlist,
                min(self._deadline - now, PEEK_SECONDS) if peek else self._deadline - now,
            )
            if peek and not r and not codec.area_collect(state, child.area):
                self._kill(RunStatus.BAD_OUTPUT)
                return
            if w:
                self._write()
            if child.out_r in r:
                chunk = _read(child.out_r)
                if chunk is None:
                    self._out_open = False
                else:
                    codec.stdout_add(state, chunk)
                    if state.out_total > L.STDOUT_KILL_BYTES:
                        self._kill(RunStatus.OUTPUT_LIMIT)
                        return
            if child.res_r in r:
                chunk = _read(child.res_r)
                if chunk is None:
                    self._res_open = False
                elif not codec.pipe_chunk(state, child.area, chunk):
                    self._kill(RunStatus.BAD_OUTPUT)
                    return
            if zygote.ctrl.fileno() in r:
                zygote.receive(0)

    def _write(self) -> None:
        child = self._child
        assert child is not None
        try:
            n = os.write(child.req_w, self._to_write[: 1 << 20])
            self._to_write = self._to_write[n:]
        except BlockingIOError:
            pass
        except BrokenPipeError:
            self._to_write = memoryview(b"")  # it died before reading: the exit tells why
        if not self._to_write and not self._state.second_phase and child.req_w >= 0:
            # Open only while a second phase may still be written.
            os.close(child.req_w)
            child.req_w = -1

    def _drain_stdout(self) -> None:
        child, state = self._child, self._state
        assert child is not None
        while state.out_total <= L.STDOUT_KILL_BYTES:
            chunk = _read(child.out_r)
            if not chunk:
                return
            codec.stdout_add(state, chunk)


def _read(fd: int) -> bytes | None:
    try:
        chunk = os.read(fd, 1 << 20)
    except BlockingIOError:
        return b""
    return chunk or None
