"""What a submission's outputs and errors show by themselves, before any comparison with a
known wrong implementation: the batch code the line that raised points at, outputs rounded for
printing, and the constant a row of weights was divided by. No Django imports."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from grader.engine.executors.base import RAGGED_RETURN

# Batch codes, from the most specific cause to none recognised.
BATCH_TRANSPOSE = "batch-transpose"
BATCH_NP_DOT = "batch-np-dot"
BATCH_FIXED_NDIM = "batch-fixed-ndim"
BATCH_UNSUPPORTED = "batch-unsupported"
BATCH_CODES = (BATCH_TRANSPOSE, BATCH_NP_DOT, BATCH_FIXED_NDIM, BATCH_UNSUPPORTED)

# ... and the weights must be softmax(scores / c) to within this (log-weight) residual.
SCALE_RESIDUAL = 1e-4


# Rounded outputs: every value a multiple of 10^-d, for d up to this many decimals.
MAX_ROUNDED_DECIMALS = 6


ROUNDED_MIN_VALUES = 20  # fewer values could be multiples of 10^-d by chance


# What an exception says when code assumed a number of dimensions (numpy 1.x and 2.x wording).
_FIXED_NDIM_ERRORS = (
    "values to unpack",  # n, d = Q.shape
    "axes don't match array",  # transpose(0, 2, 1) on 2-D or 4-D
    "out of bounds for array of dimension",  # axis=2, swapaxes(1, 2), ...
    "tuple index out of range",  # Q.shape[2]
    "cannot reshape array",  # reshape(b, n, h, d) with a hand-written batch axis
    "converted to python scalars",  # math.exp of a row: a loop that expected numbers
    "setting an array element with a sequence",
    "too many indices for array",
    "truth value of an array with more than one element is ambiguous",  # max(row) of a matrix
    "more dimensions than subscripts",  # np.einsum("id,jd->ij", ...) on 3-D
    "too many subscripts",
)


_DOT_T = re.compile(r"\.T\b|np\.transpose\(\s*\w+\s*\)|\.transpose\(\s*\)")


_NP_DOT = re.compile(r"\bdot\(")


# Idioms of 2-D code in the line that raised: a column vector made by reshape or indexing.
_TWO_D_IDIOM = re.compile(r"reshape\(\s*-1\s*,\s*1\s*\)|\[\s*:\s*,\s*(None|np\.newaxis)\s*\]")


def rounded_decimals(students: Sequence[object]) -> int | None:
    """d when every finite output value is a multiple of 10^-d (d <= 6) and not all are whole
    numbers: outputs rounded for printing. Float arithmetic never lands on such a grid."""
    arrays = [a[np.isfinite(a)] for a in students if isinstance(a, np.ndarray)]
    values = np.concatenate([a.ravel() for a in arrays]) if arrays else np.zeros(0)
    if values.size < ROUNDED_MIN_VALUES or np.all(values == np.rint(values)):
        return None
    for d in range(1, MAX_ROUNDED_DECIMALS + 1):
        scaled = values * 10.0**d
        if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-6 * np.maximum(1.0, np.abs(scaled))):
            return d
    return None


def ragged_return(text: str) -> bool:
    """Did the call return arrays of different shapes that numpy could not read as one?"""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return len(lines) == 1 and RAGGED_RETURN in lines[0]


def text_cause(text: str) -> str | None:
    """The batch code an exception's text shows: its message, or the line that raised."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines or ragged_return(text):
        return None
    message = lines[-1].lower()
    if any(e in message for e in _FIXED_NDIM_ERRORS):
        return BATCH_FIXED_NDIM
    code_lines = [
        line.strip()
        for line in lines[:-1]
        if line.startswith("    ")
        and line.strip().strip("^~ ")
        and not line.strip().startswith("File ")
    ]
    where = code_lines[-1] if code_lines else ""
    if _DOT_T.search(where):
        return BATCH_TRANSPOSE
    if _TWO_D_IDIOM.search(where):
        return BATCH_FIXED_NDIM
    if _NP_DOT.search(where):
        return BATCH_NP_DOT
    return None


def effective_scale(q: np.ndarray, k: np.ndarray, w: np.ndarray) -> float | None:
    """The c with w = softmax(q·kᵀ / c), if the weights are exactly that for some c > 0.

    log w_ij = s_ij / c - log Z_i, so after removing each row's mean the log-weights are the
    centred scores divided by c: a one-parameter least-squares fit, with a residual test.
    """
    if w.shape != (q.shape[0], k.shape[0]) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        return None
    if not np.allclose(w.sum(axis=-1), 1.0, atol=1e-6):
        return None
    s = q @ k.T
    ds = s - s.mean(axis=-1, keepdims=True)
    logs = np.log(w)
    dl = logs - logs.mean(axis=-1, keepdims=True)
    inv = float(np.sum(ds * dl) / np.sum(ds * ds))
    if inv <= 0:
        return None
    if np.max(np.abs(dl - ds * inv)) > SCALE_RESIDUAL * (1.0 + np.max(np.abs(dl))):
        return None
    return 1.0 / inv
