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
LAYER_FAILED = b"X"  # a layer could not be applied: nothing ran (the sandbox's fault)
SYNTAX = b"S"  # JSON {line, msg}
MISSING = b"M"  # entry point missing or not callable
IMPORT = b"I"  # the module raised while loading: student traceback text
LOADED = b"L"  # the module loaded; calls follow
OUTPUT = b"O"  # one call's output as .npy bytes
INPUT_AFTER = b"N"  # one array argument after the call (return_inputs), .npy bytes
CALL_ERROR = b"E"  # one call raised or returned something unusable: student-facing text
MEMORY = b"Y"  # MemoryError: the address-space limit was hit
DONE = b"D"  # every call answered

CHILD_KINDS = frozenset(
    {READY, LAYER_FAILED, SYNTAX, MISSING, IMPORT, LOADED, OUTPUT, INPUT_AFTER}
    | {CALL_ERROR, MEMORY, DONE}
)

# Fixed descriptor numbers inside a child, so the layers can close everything else.
CHILD_STDIN_FD = 0
CHILD_STDOUT_FD = 1
CHILD_STDERR_FD = 2
CHILD_RESULT_FD = 3
CHILD_REQUEST_FD = 4
CHILD_RULESET_FD = 5

# Exit codes of a child that stops on its own (anything else is the student's doing).
EXIT_LAYER_FAILED = 70


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
