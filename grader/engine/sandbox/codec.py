"""The wire format between the trusted side and a child: requests out, frames back.

``request_encode`` turns calls into the bytes a child reads. ``RunState`` and the functions on
it parse what a child sends (result pipe and result area) as untrusted bytes, and
``run_result`` turns the state at the end of a run into a ``RunResult``: the one place where
the protocol's frame codes and a child's exit map to a ``RunStatus`` and its message. Nothing
here reads or writes a descriptor other than the result area given.
"""

from __future__ import annotations

import json
import logging
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from grader.engine import limits as L
from grader.engine.executors.base import Arg, Call, CallResult, Limits, RunResult, RunStatus
from grader.engine.sandbox import messages as M
from grader.engine.sandbox import npy
from grader.engine.sandbox.inside import protocol as p

log = logging.getLogger("grader.engine.sandbox")

# A frame from the child may hold one array (plus its .npy header) or an error text.
MAX_RESULT_FRAME = L.OUTPUT_ARRAY_MAX_BYTES + npy.HEADER_MAX_BYTES + 16
STDOUT_TRUNCATED = "\n[... output truncated after {kib} KiB]"
# The shared result area of a child: every output of a run, frame headers, the length word.
AREA_BYTES = L.OUTPUT_TOTAL_MAX_BYTES + 4096
# Frames holding text (tracebacks, error details) are small; their JSON is parsed here.
MAX_TEXT_FRAME = 4 * L.ERROR_TEXT_MAX_CHARS + 4096
# All a run may send through the result pipe: BEGIN, perhaps a PAUSE, one frame that ends it.
MAX_PIPE_BYTES = MAX_TEXT_FRAME + 3 * p.HEADER.size
# Encoded second phases kept for reuse (see PartCache): one per kind of exercise is enough.
MAX_KEPT_PARTS = 8

# The frames that end a run before its calls, and the status each means.
_ENDING_FRAMES = {p.MEMORY: RunStatus.MEMORY_LIMIT, p.OVERFLOW: RunStatus.BAD_OUTPUT}


def request_encode(
    calls: Sequence[Call],
    *,
    code: str | None = None,
    entry_point: str = "",
    lim: Limits | None = None,
    second_phase: bool = False,
) -> bytes:
    """A request, or with no ``code`` a second phase of one (calls only)."""
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
            # The wire's name for it: the child pauses after these calls.
            gate=second_phase,
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


class PartCache:
    """Encoded second phases. The grade's holds the diagnosis's fixed inputs, the same calls in
    every grade, so its encoding is kept (keyed by the calls, held so that their ids stay
    theirs; a few entries at most, one per kind of exercise)."""

    def __init__(self) -> None:
        self._parts: dict[tuple[int, ...], tuple[tuple[Call, ...], bytes]] = {}

    def get(self, calls: Sequence[Call]) -> bytes:
        key = tuple(map(id, calls))
        kept = self._parts.get(key)
        if kept is None:
            kept = (tuple(calls), request_encode(calls))
            frozen = all(
                not a.flags.writeable
                for c in calls
                for a in (*c.args, *c.kwargs.values())
                if isinstance(a, np.ndarray)
            )
            if frozen and len(self._parts) < MAX_KEPT_PARTS:  # else it could change under us
                self._parts[key] = kept
        return kept[1]


@dataclass
class RunState:
    """What a child told us so far about one run."""

    calls: list[Call]
    entry_point: str
    # The child may pause after the calls so far, waiting for a second phase.
    second_phase: bool = False
    results: list[CallResult] = field(default_factory=list)
    buf: bytearray = field(default_factory=bytearray)
    result_bytes: int = 0
    out: bytearray = field(default_factory=bytearray)
    out_total: int = 0
    begun: bool = False  # the child set its state and is about to run the student's code
    loaded: bool = False
    area_pos: int = p.AREA_HEADER.size  # how far the result area has been read and parsed
    paused: bool = False  # the child waits for a second phase
    status: RunStatus | None = None
    message: str = ""
    # Output of the current call, waiting for its inputs_after frames.
    pending: np.ndarray | None = None
    pending_inputs: list[np.ndarray] = field(default_factory=list)
    pending_expect: int = 0


def _array_count(call: Call) -> int:
    return sum(isinstance(a, np.ndarray) for a in (*call.args, *call.kwargs.values()))


def pipe_chunk(state: RunState, area: int, chunk: bytes) -> bool:
    """Take what the result pipe gave; False if the child broke the protocol.

    Parsed before the size is judged: BEGIN comes first, so a child that floods the pipe once
    its run began is the student's bad output, never a run that did not begin."""
    state.result_bytes += len(chunk)
    state.buf += chunk
    parsed = pipe_parse(state, area)
    return parsed and state.result_bytes <= MAX_PIPE_BYTES


def pipe_parse(state: RunState, area: int) -> bool:
    """Consume complete frames from the result pipe: only frames that end a run (or a phase)
    come this way, and each is read after the result area it concludes. False on a breach."""
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
        if not area_collect(state, area) or not _safe_frame(state, kind, payload):
            ok = False
            break
    del buf[:pos]
    return ok


def area_collect(state: RunState, area: int) -> bool:
    """Read what the child's result area gained since the last read (a copy: the child may
    still be scribbling) and parse its frames as untrusted bytes. False if malformed."""
    if not state.begun:
        # What the area holds was written after BEGIN, still unread in the pipe: read then.
        return True
    try:
        (end,) = p.AREA_HEADER.unpack(os.pread(area, p.AREA_HEADER.size, 0))
        if end == 0:  # the child never wrote: nothing loaded
            return True
        if not state.area_pos <= end <= AREA_BYTES:
            return False  # out of bounds, or shrunk below what we already read
        data = os.pread(area, end - state.area_pos, state.area_pos)
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
        if not _safe_frame(state, kind, data[start : start + length]):
            return False
        pos = start + length
    return True


def _safe_frame(state: RunState, kind: bytes, payload: bytes) -> bool:
    try:
        return frame_take(state, kind, payload)
    except Exception:  # whatever the child sent (a JSON bomb, odd types): its fault
        log.info("sandbox: malformed %r frame from the child", kind, exc_info=True)
        return False


def frame_take(state: RunState, kind: bytes, payload: bytes) -> bool:
    """One frame into the state; False if it breaks the protocol where it came."""
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
    elif kind in _ENDING_FRAMES:
        state.status = _ENDING_FRAMES[kind]
    elif kind == p.LOADED and not state.loaded:
        state.loaded = True
    elif not state.loaded:
        return False
    elif kind == p.PAUSE:
        # Only where a second phase may follow, once, after exactly the calls sent so far.
        if not state.second_phase or state.paused or state.pending is not None:
            return False
        if len(state.results) != n_calls:
            return False
        state.paused = True
    elif state.pending is not None:
        if kind != p.INPUT_AFTER:
            return False
        state.pending_inputs.append(npy.loads(payload, L.OUTPUT_ARRAY_MAX_BYTES))
        if len(state.pending_inputs) == state.pending_expect:
            _finish_pending(state)
    elif kind == p.OUTPUT and len(state.results) < n_calls:
        arr = npy.loads(payload, L.OUTPUT_ARRAY_MAX_BYTES)
        call = state.calls[len(state.results)]
        expect = _array_count(call) if call.return_inputs else 0
        if expect:
            state.pending, state.pending_expect, state.pending_inputs = arr, expect, []
        else:
            state.results.append(CallResult(output=arr))
    elif kind == p.CALL_ERROR and len(state.results) < n_calls:
        state.results.append(CallResult(error=_call_error(json.loads(payload))))
    elif kind == p.DONE and len(state.results) == n_calls:
        state.status = RunStatus.OK
    else:
        return False
    return True


def _finish_pending(state: RunState) -> None:
    state.results.append(CallResult(output=state.pending, inputs_after=tuple(state.pending_inputs)))
    state.pending, state.pending_inputs, state.pending_expect = None, [], 0


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


def stdout_add(state: RunState, chunk: bytes) -> None:
    state.out_total += len(chunk)
    room = L.STDOUT_KEEP_BYTES - len(state.out)
    if room > 0:
        state.out += chunk[:room]


def stdout_text(state: RunState) -> str:
    stdout = bytes(state.out).decode("utf-8", "replace")
    if state.out_total > L.STDOUT_KEEP_BYTES:
        stdout += STDOUT_TRUNCATED.format(kib=L.STDOUT_KEEP_BYTES // 1024)
    return stdout


def run_result(
    state: RunState, killed_for: RunStatus | None, lim: Limits, slot: int = -1
) -> RunResult:
    """The run's result once it ended: ``killed_for`` is the limit we killed the child for;
    with no final frame and no kill, ``state.message`` holds the zygote's report of its exit."""
    stdout = stdout_text(state)
    status = killed_for or state.status
    message = ""
    if not state.begun:
        # Whatever ended it, none of the student's code ran: the sandbox failed, not them
        # (retried elsewhere, never charged).
        log.error(
            "sandbox: a child of slot %d could not start its run (%s): %s",
            slot,
            status or "exited",
            state.message,
        )
        return RunResult(RunStatus.INTERNAL, [], M.MSG_INTERNAL)
    if status is None:
        # It died before answering: the exit status tells why.
        status, message = exit_status(json.loads(state.message), lim)
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
        _finish_pending(state)
    return RunResult(status=status, calls=list(state.results), message=message, stdout=stdout)


def exit_status(info: dict[str, Any], lim: Limits) -> tuple[RunStatus, str]:
    """The status of a child that died before answering, from the zygote's report."""
    cpu_limit = L.cpu_rlimit_seconds(lim)
    sig = info.get("signal")
    if sig is not None:
        # RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL at the hard one (if SIGXCPU was
        # ignored). We did not send this SIGKILL (we would have said why).
        if sig == signal.SIGXCPU or (
            sig == signal.SIGKILL and info.get("cpu", 0) >= cpu_limit - 0.05
        ):
            # The limit as the exercise states it; the rlimit only rounds it up.
            return RunStatus.CPU_LIMIT, M.MSG_CPU_LIMIT.format(seconds=lim.cpu_seconds)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return RunStatus.SIGNALED, M.MSG_SIGNALED.format(signal=name)
    return RunStatus.EXITED, M.MSG_EXITED.format(code=info.get("code"))
