"""Framing shared by the trusted parent and the code inside the sandbox.

This file is bind-mounted into the sandbox, so it imports only the standard library and must
never hold anything secret. A frame is one kind byte, a little-endian u32 length, the payload.
"""

from __future__ import annotations

import os
import struct

HEADER = struct.Struct("<cI")

# Parent -> child (request).
REQ_HEADER = b"Q"  # JSON: entry point, limits, the calls (arguments refer to array frames)
REQ_CODE = b"C"  # the student's source, UTF-8
REQ_ARRAY = b"A"  # one input array: raw C-order bytes (dtype, shape in the header)

# Child -> parent (result pipe).
READY = b"R"  # every layer applied; waiting for a request
# A layer could not be applied, or the run could not start: no student code ran (the sandbox's
# fault). Valid only before BEGIN.
LAYER_FAILED = b"X"
# The request read and the process state set: the student's code runs next. Through the pipe,
# which the student's code can add to but not rewrite (it can rewrite the area).
BEGIN = b"B"
SYNTAX = b"S"  # JSON {line, msg}
MISSING = b"M"  # entry point missing or not callable
IMPORT = b"I"  # the module raised while loading: student traceback text
LOADED = b"L"  # the module loaded; calls follow
OUTPUT = b"O"  # one call's output as .npy bytes
INPUT_AFTER = b"N"  # one array argument after the call (return_inputs), .npy bytes
CALL_ERROR = b"E"  # one call raised or returned something unusable: student-facing text
MEMORY = b"Y"  # MemoryError: the address-space limit was hit
OVERFLOW = b"Z"  # the results do not fit the result area
DONE = b"D"  # every call answered
# The calls before the request's gate answered: waiting for the rest of the request (a second
# length-prefixed part: header and arrays, no code) or the pipe closed (the end of the run).
PAUSE = b"P"

# Results travel in two ways. Per-call frames go into a shared memory area (a memfd both sides
# map), so a grade costs the trusted side two wake-ups instead of one per call, and the results
# of finished calls survive a kill. BEGIN and the frames that end a run go through the result
# pipe, which is what wakes the trusted side; it reads the area then (a copy, parsed as
# untrusted bytes).
PIPE_KINDS = frozenset(
    {LAYER_FAILED, BEGIN, SYNTAX, MISSING, IMPORT, MEMORY, OVERFLOW, DONE, PAUSE}
)
AREA_KINDS = frozenset({LOADED, OUTPUT, INPUT_AFTER, CALL_ERROR})
# The area starts with the committed length (u64, header included), then frames.
AREA_HEADER = struct.Struct("<Q")

# Fixed descriptor numbers inside a child, so the layers can close everything else.
CHILD_STDIN_FD = 0
CHILD_STDOUT_FD = 1
CHILD_STDERR_FD = 2
CHILD_RESULT_FD = 3
CHILD_REQUEST_FD = 4
CHILD_AREA_FD = 5  # mapped, then closed before student code runs
CHILD_RULESET_FD = 6

# Exit codes of a child that stops on its own (anything else is the student's doing).
EXIT_LAYER_FAILED = 70


NPY_MAGIC = b"\x93NUMPY\x01\x00"


def npy_bytes(descr: str, shape: tuple[int, ...], data: bytes) -> bytes:
    """A version 1.0 .npy file (C order), as np.save writes it, without numpy."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, shape)  # noqa: UP031
    pad = 63 - (len(NPY_MAGIC) + 2 + len(header)) % 64
    encoded = (header + " " * pad + "\n").encode("latin1")
    return NPY_MAGIC + struct.pack("<H", len(encoded)) + encoded + data


def frame(kind: bytes, payload: bytes) -> bytes:
    return HEADER.pack(kind, len(payload)) + payload


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("pipe closed mid-frame")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


REQUEST_LENGTH = struct.Struct("<Q")


def read_request(fd: int, max_len: int) -> memoryview:
    """The whole request (prefixed by its length), read in large chunks: one syscall or two
    instead of two per array."""
    (length,) = REQUEST_LENGTH.unpack(read_exact(fd, REQUEST_LENGTH.size))
    if length > max_len:
        raise ValueError("request too long")
    return memoryview(read_exact(fd, length))


def split_frames(data: memoryview) -> list[tuple[bytes, memoryview]]:
    frames = []
    pos = 0
    while pos < len(data):
        kind, length = HEADER.unpack_from(data, pos)
        start = pos + HEADER.size
        if start + length > len(data):
            raise ValueError("truncated frame")
        frames.append((kind, data[start : start + length]))
        pos = start + length
    return frames
