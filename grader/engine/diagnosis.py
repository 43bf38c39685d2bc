"""Name the student's misconception by comparing outputs with known wrong implementations.

No Django imports. The student's outputs on diagnostic inputs come from the executor (the
sandbox); the known wrong implementations are OUR trusted functions, run here. A code is named
when the student's outputs match a wrong implementation on every diagnostic input where that
implementation differs from the reference; two codes are rule-based instead: ``mutates-input``
(an input came back changed) and ``wrong-shape`` (an output's shape differs from the
reference's). A correct implementation matches the reference everywhere, so it matches no wrong
implementation on an input where that one differs from the reference: no code is named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.engine import reference
from grader.engine.checks.inputs import (
    attention_call,
    causal_mask,
    key_mask,
    mha_call,
    mha_weights,
    softmax_call,
    unit,
)
from grader.engine.executors.base import Call, CallResult
from grader.engine.misconceptions import CODES, LARGE, MASK, PLAIN, wrong_implementations_for

# Tag of the attention probes called with V = identity (their outputs are the weights).
WEIGHTS = "weights"
# A measured scale is "the same" on every probe within this relative spread...
SCALE_SPREAD = 1e-3
# ... and the weights must be softmax(scores / c) to within this (log-weight) residual.
SCALE_RESIDUAL = 1e-4

# Two outputs "match" within float32 rounding of O(1) values ...
MATCH_RTOL = 1e-3
MATCH_ATOL = 1e-4
# ... and a wrong implementation "differs" from the reference by far more than that.
DIFFER_RTOL = 1e-2
DIFFER_ATOL = 1e-3


class _Raised:
    """The outcome of a call that raised (a student's error or a wrong implementation's)."""


RAISED = _Raised()


@dataclass(frozen=True)
class DiagnosticProbe:
    call: Call
    tags: frozenset[str]


def _probe(call: Call, *tags: str) -> DiagnosticProbe:
    return DiagnosticProbe(call, frozenset(tags))


def diagnostic_probes(kind: str, rng: np.random.Generator) -> list[DiagnosticProbe]:
    """Inputs that tell the known misconceptions apart. Plain inputs send their arrays back
    (``return_inputs``) so an in-place change is seen."""
    if kind == reference.KIND_ATTENTION:
        probes = [
            # Several d_k, with d_v, n and m all different from d_k, so a constant, √d_v or √m
            # is right on at most one of them.
            _probe(
                attention_call(
                    unit(rng, (n, d_k)),
                    unit(rng, (m, d_k)),
                    unit(rng, (m, d_v)),
                    return_inputs=True,
                ),
                PLAIN,
            )
            for n, m, d_k, d_v in ((5, 7, 16, 3), (4, 6, 64, 5), (6, 3, 4, 9))
        ]
        mask = key_mask(rng, (5, 7), p_keep=0.5)
        mask[:, 0] = True
        mask[:, -1] = False  # every row has an allowed and a blocked key (for mask-inverted)
        probes.append(
            _probe(
                attention_call(unit(rng, (5, 16)), unit(rng, (7, 16)), unit(rng, (7, 3)), mask),
                MASK,
            )
        )
        # Every row's scores are offset by ±1e3 (column 0 of Q times column 0 of K, over √16):
        # exp() overflows (or underflows to 0/0) in every row unless the max is subtracted.
        q, k = unit(rng, (4, 16)), unit(rng, (6, 16))
        b = np.sqrt(1e3 * 4.0)
        q[:, 0], k[:, 0] = np.array([1.0, -1.0, 1.0, -1.0]) * b, b
        probes.append(_probe(attention_call(q, k, unit(rng, (6, 3))), LARGE))
        # V = identity: the output is the weights, so the scale actually used can be measured,
        # whatever constant a student hard-coded (see _effective_scale).
        probes += [
            _probe(attention_call(unit(rng, (n, d_k)), unit(rng, (m, d_k)), np.eye(m)), WEIGHTS)
            for n, m, d_k in ((5, 6, 9), (4, 7, 36), (6, 5, 100))
        ]
        return probes
    if kind == reference.KIND_MULTI_HEAD:
        probes = [
            _probe(mha_call(unit(rng, (n, d)), mha_weights(rng, d), h, return_inputs=True), PLAIN)
            for d, h, n in ((16, 4, 5), (48, 3, 6), (32, 2, 4), (24, 6, 5))
        ]
        probes.append(
            _probe(mha_call(unit(rng, (6, 16)), mha_weights(rng, 16), 4, causal_mask(6)), MASK)
        )
        probes.append(
            _probe(mha_call(unit(rng, (5, 16)) * np.sqrt(1e3), mha_weights(rng, 16), 4), LARGE)
        )
        probes += [
            _probe(_mha_weights_call(rng, n_heads, d_head, n), WEIGHTS)
            for n_heads, d_head, n in ((2, 9, 5), (2, 36, 5), (1, 100, 5))
        ]
        return probes
    if kind == reference.KIND_SOFTMAX:
        probes = [
            _probe(softmax_call(unit(rng, shape) * 3.0, axis, return_inputs=True), PLAIN)
            for shape, axis in (((4, 6), None), ((3, 4, 5), 1), ((5, 5), None), ((4, 3), 0))
        ]
        offsets = np.array([[1e3], [-1e3], [2e3]])  # overflow, 0/0 and overflow in every row
        probes.append(_probe(softmax_call(offsets + unit(rng, (3, 6)) * 2.0), LARGE))
        return probes
    raise ValueError(f"unknown exercise kind {kind!r}")


def _trusted_outcome(func: Any, call: Call) -> np.ndarray | _Raised:
    """Run one of OUR functions (reference or wrong implementation) on copies of the inputs."""
    args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in call.args)
    kwargs = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in call.kwargs.items()}
    try:
        with np.errstate(all="ignore"):  # overflow is the point of some wrong implementations
            return np.asarray(func(*args, **kwargs), dtype=np.float64)
    except Exception:
        return RAISED


def _student_outcome(result: CallResult | None) -> np.ndarray | _Raised | None:
    if result is None:
        return None  # never ran (the run stopped early): no evidence either way
    if result.error is not None or result.output is None:
        return RAISED
    if result.output.dtype.kind not in "biuf":
        return RAISED
    return result.output.astype(np.float64)


def _same(a: np.ndarray | _Raised, b: np.ndarray | _Raised, rtol: float, atol: float) -> bool:
    if isinstance(a, _Raised) or isinstance(b, _Raised):
        return a is b
    if a.shape != b.shape:
        return False
    fa, fb = np.isfinite(a), np.isfinite(b)
    if not np.array_equal(fa, fb):
        return False
    return bool(np.allclose(a[fa], b[fb], rtol=rtol, atol=atol))


def _mutated(call: Call, result: CallResult | None) -> bool:
    if result is None or not call.return_inputs or result.inputs_after is None:
        return False
    before = [a for a in call.args if isinstance(a, np.ndarray)]
    if len(before) != len(result.inputs_after):
        return False
    return any(
        b.shape != a.shape or not np.array_equal(b, a, equal_nan=True)
        for b, a in zip(before, result.inputs_after, strict=True)
    )


def diagnose(
    kind: str, probes: Sequence[DiagnosticProbe], results: Sequence[CallResult | None]
) -> list[str]:
    """The misconception codes the student's outputs show, in the catalogue's order."""
    codes: set[str] = set()
    ref_func = {
        reference.KIND_ATTENTION: reference.attention,
        reference.KIND_MULTI_HEAD: reference.multi_head_attention,
        reference.KIND_SOFTMAX: reference.softmax,
    }[kind]
    refs = [_trusted_outcome(ref_func, p.call) for p in probes]
    students = [_student_outcome(r) for r in results]

    for probe, result, ref, student in zip(probes, results, refs, students, strict=True):
        if _mutated(probe.call, result):
            codes.add("mutates-input")
        arrays = isinstance(student, np.ndarray) and isinstance(ref, np.ndarray)
        if arrays and student.shape != ref.shape:
            codes.add("wrong-shape")

    # Any constant, not only the ones of the known wrong implementations below.
    if kind != reference.KIND_SOFTMAX and _constant_scale(kind, probes, students):
        codes.add("hardcoded-scale")

    for impl in wrong_implementations_for(kind):
        if impl.code in codes:
            continue
        differing = matched = matched_arrays = 0
        for probe, ref, student in zip(probes, refs, students, strict=True):
            if not (impl.tags & probe.tags) or student is None:
                continue
            wrong = _trusted_outcome(impl.func, probe.call)
            if _same(wrong, ref, DIFFER_RTOL, DIFFER_ATOL):
                continue  # this input does not tell the two apart
            differing += 1
            if _same(student, wrong, MATCH_RTOL, MATCH_ATOL) and not _same(
                student, ref, MATCH_RTOL, MATCH_ATOL
            ):
                matched += 1
                matched_arrays += isinstance(wrong, np.ndarray)
        # Every telling input agrees, and at least one on an actual output (two functions that
        # both raise are not evidence of the same mistake).
        if differing and matched == differing and matched_arrays:
            codes.add(impl.code)
    return [code for code in CODES if code in codes]


def _effective_scale(q: np.ndarray, k: np.ndarray, w: np.ndarray) -> float | None:
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


def _mha_weights_call(rng: np.random.Generator, n_heads: int, d_head: int, n: int) -> Call:
    """Inputs whose output shows each head's weights (needs n <= d_head).

    X's rows are the first n unit vectors, so X·W is the first n rows of W: Q and K get unit
    variance entries from W_q, W_k. W_v gives each head the identity (padded with zeros) as its
    values and W_o = I, so columns h·d_head … h·d_head + n - 1 of the output are head h's weights.
    """
    d_model = n_heads * d_head
    x = np.eye(n, d_model)
    w_q, w_k = unit(rng, (d_model, d_model)), unit(rng, (d_model, d_model))
    w_v = np.zeros((d_model, d_model))
    for h in range(n_heads):
        w_v[np.arange(n), h * d_head + np.arange(n)] = 1.0
    return mha_call(x, (w_q, w_k, w_v, np.eye(d_model)), n_heads)


def _weight_triples(
    kind: str, call: Call, out: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None:
    """(q, k, weights) of each attention in a WEIGHTS probe, or None if the shape is wrong."""
    args = [np.asarray(a, dtype=np.float64) if isinstance(a, np.ndarray) else a for a in call.args]
    if kind == reference.KIND_ATTENTION:
        return [(args[0], args[1], out)]
    x, w_q, w_k, n_heads = args[0], args[1], args[2], int(args[5])
    n, d_model = x.shape
    d_head = d_model // n_heads
    if out.shape != (n, d_model):
        return None
    triples = []
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        triples.append((w_q[:n, cols], w_k[:n, cols], out[:, h * d_head : h * d_head + n]))
    return triples


def _constant_scale(
    kind: str,
    probes: Sequence[DiagnosticProbe],
    students: Sequence[np.ndarray | _Raised | None],
) -> bool:
    """True when the student's scale is one constant across different d_k (and is not 1, which
    is missing-scale): a number right for at most one head size."""
    scales = []
    for probe, student in zip(probes, students, strict=True):
        if WEIGHTS not in probe.tags:
            continue
        if not isinstance(student, np.ndarray):
            return False
        triples = _weight_triples(kind, probe.call, student)
        if triples is None:
            return False
        for q, k, w in triples:
            c = _effective_scale(q, k, w)
            if c is None:
                return False
            scales.append(c)
    if len(scales) < 2:
        return False
    spread = max(scales) / min(scales) - 1.0
    return spread < SCALE_SPREAD and abs(scales[0] - 1.0) > 1e-2
