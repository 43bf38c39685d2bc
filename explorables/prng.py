"""The explorables' seeded randomness, bit for bit the same as static/explorables/compute.mjs.

mulberry32 and mixSeed are 32-bit integer hashes, so Python reproduces their outputs exactly.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

_MASK = 0xFFFFFFFF


def _imul(a: int, b: int) -> int:
    """JavaScript's Math.imul: the low 32 bits of the product, as an unsigned int here."""
    return (a * b) & _MASK


def mulberry32(seed: int) -> Callable[[], float]:
    """Floats in [0, 1), the same sequence as compute.mjs's mulberry32(seed)."""
    state = seed & _MASK

    def next_float() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & _MASK
        t = state
        t = _imul(t ^ (t >> 15), t | 1)
        t = (t ^ ((t + _imul(t ^ (t >> 7), t | 61)) & _MASK)) & _MASK
        return ((t ^ (t >> 14)) & _MASK) / 4294967296

    return next_float


def mix_seed(*parts: int) -> int:
    """compute.mjs's mixSeed: a base seed mixed with small integers into a new 32-bit seed."""
    h = 0x811C9DC5
    for p in parts:
        h = _imul(h ^ (p & _MASK), 0x01000193)
        h = _imul(h ^ (h >> 13), 0x5BD1E995)
    return h


def mulberry32_block(seed: int, count: int, start: int = 0) -> np.ndarray:
    """Outputs number start to start + count - 1 of mulberry32(seed), as a float64 array.

    mulberry32's state is a counter (seed + n·0x6D2B79F5), so output n is a pure function of
    n and the whole stream vectorises; uint32 arithmetic wraps modulo 2³² like Math.imul.
    """
    n = np.arange(start + 1, start + count + 1, dtype=np.uint64)
    state = ((seed & _MASK) + n * 0x6D2B79F5) & _MASK
    t = state.astype(np.uint32)
    with np.errstate(over="ignore"):
        t = (t ^ (t >> np.uint32(15))) * (t | np.uint32(1))
        t = t ^ (t + (t ^ (t >> np.uint32(7))) * (t | np.uint32(61)))
        t = t ^ (t >> np.uint32(14))
    return t.astype(np.float64) / 4294967296
