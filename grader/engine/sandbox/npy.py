"""Reading .npy bytes that came from untrusted code, and writing the ones we send in.

The header is parsed and checked by hand (magic, version, a plain numeric dtype, shape whose
size matches the bytes exactly, a size bound) before numpy sees the data. The canonical header
the sandbox writes is matched strictly and its data copied out with ``np.frombuffer``; anything
else goes through a full check and ``np.load(allow_pickle=False)``. No object arrays, no
pickles, no subclasses: the result is always a plain, owned, writable ``np.ndarray``.
"""

from __future__ import annotations

import ast
import io
import math
import re
import struct

import numpy as np

MAGIC = b"\x93NUMPY"
HEADER_MAX_BYTES = 4096
# Plain numeric dtypes only (bool, signed/unsigned int, float up to 8 bytes), either byte order.
ALLOWED_DESCR = frozenset(
    f"{order}{kind}{size}"
    for order in "<>|"
    for kind, sizes in (("b", (1,)), ("i", (1, 2, 4, 8)), ("u", (1, 2, 4, 8)), ("f", (2, 4, 8)))
    for size in sizes
)
MAX_NDIM = 32


class UnsafeArray(ValueError):
    """The bytes are not a plain numeric .npy array within bounds."""


def dumps(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    # Not ascontiguousarray: it turns a 0-d array into 1-d.
    np.save(buf, np.require(arr, requirements="C"), allow_pickle=False)
    return buf.getvalue()


def check_header(data: bytes, max_bytes: int) -> tuple[np.dtype, tuple[int, ...]]:
    if len(data) < 10 or data[:6] != MAGIC:
        raise UnsafeArray("not .npy")
    major = data[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", data[8:10])
        start = 10
    elif major in (2, 3):
        if len(data) < 12:
            raise UnsafeArray("truncated")
        (hlen,) = struct.unpack("<I", data[8:12])
        start = 12
    else:
        raise UnsafeArray("unknown .npy version")
    if hlen > HEADER_MAX_BYTES or start + hlen > len(data):
        raise UnsafeArray("bad header length")
    try:
        header = ast.literal_eval(data[start : start + hlen].decode("latin1"))
    except (ValueError, SyntaxError, MemoryError, RecursionError) as e:
        raise UnsafeArray("unparsable header") from e
    if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
        raise UnsafeArray("bad header keys")
    descr, fortran, shape = header["descr"], header["fortran_order"], header["shape"]
    if not isinstance(descr, str) or descr not in ALLOWED_DESCR:
        raise UnsafeArray("dtype not allowed")
    if not isinstance(fortran, bool):
        raise UnsafeArray("bad fortran_order")
    if (
        not isinstance(shape, tuple)
        or len(shape) > MAX_NDIM
        or not all(type(n) is int and n >= 0 for n in shape)
    ):
        raise UnsafeArray("bad shape")
    dtype = np.dtype(descr)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > max_bytes:
        raise UnsafeArray("array too large")
    if len(data) - start - hlen != nbytes:
        raise UnsafeArray("data length does not match the header")
    return dtype, shape


# The exact header np.save writes for a plain array (version 1.0). Matching it strictly lets us
# skip ast.literal_eval (slow per array, and this runs once per call of every grade).
_CANONICAL = re.compile(
    rb"\{'descr': '([<>|][biuf][1248])', 'fortran_order': False, "
    rb"'shape': \(((?:[0-9]{1,10}, )*[0-9]{1,10},?|)\), \} *\n"
)


def _fast(data: bytes, max_bytes: int) -> np.ndarray | None:
    """The canonical C-order header, validated, then the data viewed without another parse."""
    if len(data) < 10 or data[:8] != MAGIC + b"\x01\x00":
        return None
    (hlen,) = struct.unpack("<H", data[8:10])
    m = _CANONICAL.fullmatch(data, 10, 10 + hlen)
    if m is None or m.group(1).decode() not in ALLOWED_DESCR:
        return None
    dtype = np.dtype(m.group(1).decode())
    shape = tuple(int(n) for n in m.group(2).split(b",") if n.strip())
    if len(shape) > MAX_NDIM:
        raise UnsafeArray("bad shape")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > max_bytes:
        raise UnsafeArray("array too large")
    if len(data) - 10 - hlen != nbytes:
        raise UnsafeArray("data length does not match the header")
    # A copy: a plain, writable, owned ndarray (never a view of the message buffer).
    return np.frombuffer(data, dtype=dtype, offset=10 + hlen).reshape(shape).copy()


def loads(data: bytes, max_bytes: int) -> np.ndarray:
    """An untrusted .npy payload as a plain numeric ndarray, or UnsafeArray.

    Canonical headers (what np.save writes) take a strict fast path; anything else goes through
    a full header check and then np.load(allow_pickle=False).
    """
    arr = _fast(data, max_bytes)
    if arr is None:
        check_header(data, max_bytes)
        try:
            arr = np.load(io.BytesIO(data), allow_pickle=False)
        except (ValueError, OSError, EOFError) as e:
            raise UnsafeArray("numpy refused it") from e
    if type(arr) is not np.ndarray or arr.dtype.kind not in "biuf" or arr.dtype.hasobject:
        raise UnsafeArray("not a plain numeric array")
    return arr
