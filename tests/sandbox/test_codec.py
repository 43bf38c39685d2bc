"""The trusted side's reading of a child's frames (codec.py), without a child: hand-made
frames in a real memfd result area."""

from __future__ import annotations

import os
import signal
import struct
from collections.abc import Iterator

import numpy as np
import pytest

from grader.engine.executors.base import Call, CallResult, Limits, RunStatus
from grader.engine.sandbox import codec
from grader.engine.sandbox import messages as M
from grader.engine.sandbox.inside import protocol as p


def out(x: float) -> bytes:
    return p.frame(p.OUTPUT, p.npy_bytes("<f8", (1,), struct.pack("<d", x)))


@pytest.fixture
def area() -> Iterator[int]:
    fd = os.memfd_create("area-test")
    os.write(fd, p.AREA_HEADER.pack(0))
    try:
        yield fd
    finally:
        os.close(fd)


def write_area(area: int, frames: bytes) -> None:
    os.pwrite(area, frames, p.AREA_HEADER.size)
    os.pwrite(area, p.AREA_HEADER.pack(p.AREA_HEADER.size + len(frames)), 0)


@pytest.mark.parametrize(
    ("second_phase", "done", "ok"),
    [
        (True, 2, True),  # exactly the calls sent so far
        (True, 1, False),  # before its calls are done: a protocol breach
        (False, 2, False),  # no second phase may follow: a protocol breach
    ],
)
def test_a_pause_fits_only_after_the_calls_sent_where_a_second_phase_may_follow(
    second_phase: bool, done: int, ok: bool
) -> None:
    calls = [Call(args=(1.0,))] * 2
    state = codec.RunState(calls=calls, entry_point="f", second_phase=second_phase)
    state.begun = state.loaded = True
    state.results = [CallResult(output=np.zeros(1))] * done
    assert codec.frame_take(state, p.PAUSE, b"") is ok
    assert state.paused is ok


def test_a_second_pause_is_a_breach() -> None:
    state = codec.RunState(calls=[Call(args=(1.0,))], entry_point="f", second_phase=True)
    state.begun = state.loaded = True
    state.results = [CallResult(output=np.zeros(1))]
    assert codec.frame_take(state, p.PAUSE, b"")
    assert not codec.frame_take(state, p.PAUSE, b"")


def test_the_second_phase_results_follow_the_first(area: int) -> None:
    calls = [Call(args=(1.0,))] * 2
    state = codec.RunState(calls=calls, entry_point="f", second_phase=True)
    assert codec.pipe_chunk(state, area, p.frame(p.BEGIN, b""))
    frames = p.frame(p.LOADED, b"") + out(0.0) + out(1.0)
    write_area(area, frames)
    assert codec.pipe_chunk(state, area, p.frame(p.PAUSE, b""))
    assert state.paused and len(state.results) == 2
    # What the executor does on Run.more: the calls sent, no further pause.
    state.calls += [Call(args=(1.0,))]
    state.paused = state.second_phase = False
    write_area(area, frames + out(2.0))
    assert codec.pipe_chunk(state, area, p.frame(p.DONE, b""))
    result = codec.run_result(state, None, Limits())
    assert result.status == RunStatus.OK
    assert [float(c.output[0]) for c in result.calls] == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("flood", [0, 1 << 20])
def test_begin_is_read_before_the_pipe_is_judged_too_full(area: int, flood: int) -> None:
    """BEGIN and a flood that followed it in one read: the student's bad output, not a run
    that never began (which would be the sandbox's failure, retried and never charged)."""
    state = codec.RunState(calls=[Call(args=(1.0,))], entry_point="f")
    accepted = codec.pipe_chunk(state, area, p.frame(p.BEGIN, b"") + b"\0" * flood)
    assert state.begun
    assert accepted is (flood == 0)


@pytest.mark.parametrize(
    ("frame", "status"),
    [(p.MEMORY, RunStatus.MEMORY_LIMIT), (p.OVERFLOW, RunStatus.BAD_OUTPUT)],
)
def test_frames_that_end_a_run_map_to_their_status(frame: bytes, status: RunStatus) -> None:
    state = codec.RunState(calls=[Call(args=(1.0,))], entry_point="f")
    state.begun = True
    assert codec.frame_take(state, frame, b"")
    assert codec.run_result(state, None, Limits()).status == status


@pytest.mark.parametrize("sig,cpu", [(signal.SIGXCPU, 0.3), (signal.SIGKILL, 2.0)])
def test_a_cpu_limit_is_stated_as_the_exercise_states_it(sig: int, cpu: float) -> None:
    # The rlimit rounds 1.5 s up to 2 s; the message says the limit the student was shown.
    lim = Limits(cpu_seconds=1.5, wall_seconds=3.0)
    status, message = codec.exit_status({"signal": int(sig), "cpu": cpu}, lim)
    assert status == RunStatus.CPU_LIMIT
    assert message == M.MSG_CPU_LIMIT.format(seconds=1.5)
