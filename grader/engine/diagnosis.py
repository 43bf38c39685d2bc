"""Name the student's misconception by comparing outputs with known wrong implementations.

No Django imports. The algorithm is the same for every exercise kind: the kind (from the
registry, ``grader.engine.kinds``) supplies its diagnostic inputs, reference, wrong
implementations and optional hooks. The student's outputs on diagnostic inputs come from the
executor (the sandbox); the known wrong implementations are OUR trusted functions, run here. A
code is named when the student's outputs match a wrong implementation on every diagnostic input
where that implementation differs from the reference. Other codes are rule-based:
``mutates-input`` (an input came back changed), ``wrong-shape`` (an output's shape differs from
the reference's), ``hardcoded-scale`` (one constant scale at several head sizes),
``rounded-output`` (every value a multiple of 10^-d), ``unstable-softmax`` when large scores
raise ``OverflowError``, ``softmax-wrong-axis`` when the outputs are the softmax along another
axis, the batch codes, and ``mask-shape-exact`` (batch axes work, a mask that broadcasts fails).

Batch axes. Every diagnostic input of a kind with ``batch_copies`` (attention, multi-head
attention) is also sent with one and with two leading batch axes (element 0 of the batch is the
2-D input, so its output is comparable). Code that only works for one number of dimensions is
diagnosed on the form that runs (so a 3-D-only function still shows its other mistakes), and
the batch code names the cause where the exception or the outputs show it.

A correct implementation matches the reference everywhere and treats every batch element alike,
so it matches no wrong implementation on an input where that one differs from the reference:
no code is named.
"""

from __future__ import annotations

import functools
import itertools
import math
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from grader.engine.diagnosis_signs import (
    BATCH_CODES,
    BATCH_FIXED_NDIM,
    BATCH_NP_DOT,
    BATCH_UNSUPPORTED,
    effective_scale,
    ragged_return,
    rounded_decimals,
    text_cause,
)
from grader.engine.executors.base import Call, CallResult
from grader.engine.kinds import Kind, kind_get
from grader.engine.kinds.base import (
    BATCH,
    BATCH_SIZE,
    LARGE,
    MASK,
    PLAIN,
    WEIGHTS,
    DiagnosticProbe,
    WrongImplementation,
)
from grader.engine.misconceptions import CODES

# A measured scale is "the same" on every probe within this relative spread...
SCALE_SPREAD = 1e-3

# Two outputs "match" within float32 rounding of O(1) values ...
MATCH_RTOL = 1e-3
MATCH_ATOL = 1e-4
# ... and a wrong implementation "differs" from the reference by far more than that.
DIFFER_RTOL = 1e-2
DIFFER_ATOL = 1e-3


# Batch axes work, and so does a mask, but not a mask that must broadcast over the batch.
MASK_SHAPE_EXACT = "mask-shape-exact"

_AXIS_ERROR = "out of bounds for array of dimension"
# The codes of a reduction along a fixed or wrong axis (the softmax's, its backward pass's sum).
WRONG_AXIS_CODES = frozenset({"softmax-wrong-axis", "backward-wrong-axis"})
_OVERFLOW = "OverflowError"


class _Raised:
    """The outcome of a call that raised (a student's error or a wrong implementation's)."""


RAISED = _Raised()


# The diagnostic inputs are the same for every submission. They never score (a passing
# submission is never diagnosed, and a diagnosis changes no score), so nothing is gained by
# guessing them; being fixed, what the reference and every known wrong implementation return
# on them is computed once per worker process instead of at every grade.
DIAGNOSIS_SEED = 20260101


@functools.cache
def fixed_probes(kind: str) -> tuple[DiagnosticProbe, ...]:
    """The diagnostic inputs of ``kind`` every grade uses (read-only; outcomes memoised)."""
    rng = np.random.default_rng([DIAGNOSIS_SEED, zlib.crc32(kind.encode())])
    probes = tuple(diagnostic_probes(kind, rng))
    for probe in probes:
        for value in (*probe.call.args, *probe.call.kwargs.values()):
            if isinstance(value, np.ndarray):
                value.flags.writeable = False  # shared by every grade of this process
    return probes


def diagnostic_probes(kind: str, rng: np.random.Generator) -> list[DiagnosticProbe]:
    """Inputs that tell the known misconceptions of ``kind`` apart (its module draws them)."""
    return kind_get(kind).diagnostic_probes(rng)


def _trusted_outcome(func: Any, call: Call) -> np.ndarray | _Raised:
    """Run one of OUR functions (reference or wrong implementation) on copies of the inputs."""
    args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in call.args)
    kwargs = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in call.kwargs.items()}
    try:
        with np.errstate(all="ignore"):  # overflow is the point of some wrong implementations
            out = np.array(func(*args, **kwargs), dtype=np.float64)
    except Exception:
        return RAISED
    out.flags.writeable = False  # memoised and shared: nobody may change it
    return out


def _outcome(func: Any, probe: DiagnosticProbe, extra: dict[str, str] | None = None) -> Outcome:
    """``func`` on the probe's input (with ``extra`` keyword arguments), computed once."""
    key = (func, tuple(sorted(extra.items())) if extra else ())
    if key not in probe.memo:
        call = probe.call
        if extra:
            call = Call(args=call.args, kwargs={**call.kwargs, **extra})
        probe.memo[key] = _trusted_outcome(func, call)
    return probe.memo[key]


def _memo(probe: DiagnosticProbe, key: Any, compute: Callable[[], Any]) -> Any:
    if key not in probe.memo:
        probe.memo[key] = compute()
    return probe.memo[key]


def _differs(
    func: Any, probe: DiagnosticProbe, ref: Outcome, extra: dict[str, str] | None = None
) -> bool:
    """Does ``func`` differ from the reference on this probe by more than float noise?"""
    key = ("differs", func, tuple(sorted(extra.items())) if extra else ())
    return bool(
        _memo(
            probe,
            key,
            lambda: not _same(_outcome(func, probe, extra), ref, DIFFER_RTOL, DIFFER_ATOL),
        )
    )


def _student_outcome(result: CallResult | None) -> np.ndarray | _Raised | None:
    if result is None:
        return None  # never ran (the run stopped early): no evidence either way
    if result.error is not None or result.output is None:
        return RAISED
    if result.output.dtype.kind not in "biuf":
        return RAISED
    return result.output.astype(np.float64)


_TOLERANCE_CAP = 1e300
_finite = math.isfinite


def _same(a: np.ndarray | _Raised, b: np.ndarray | _Raised, rtol: float, atol: float) -> bool:
    """Same shape, non-finite in the same places, and allclose where finite.

    Hundreds of these run per diagnosis, so the common case is one pass of plain ufuncs:
    |a - b| <= atol + rtol·|b| (with |b| capped) holds only where both are finite, and is then
    the whole answer; np.allclose's generality cost ten times more."""
    if isinstance(a, _Raised) or isinstance(b, _Raised):
        return a is b
    if a.shape != b.shape:
        return False
    n = a.size
    for i in (0, n // 2, n - 1) if n else ():
        # Most comparisons are of different functions' outputs: one element finite on both
        # sides and far apart settles it (the full test below would say False too) at a
        # tenth of the cost.
        x, y = a.item(i), b.item(i)
        if abs(x - y) > atol + rtol * min(abs(y), _TOLERANCE_CAP) and _finite(x) and _finite(y):
            return False
    with np.errstate(invalid="ignore", over="ignore"):
        # Capped: an infinite b must not make an infinite tolerance (inf <= inf holds).
        close = np.abs(a - b) <= atol + rtol * np.minimum(np.abs(b), _TOLERANCE_CAP)
    if close.all():
        return True
    fa = np.isfinite(a)
    return bool(np.array_equal(fa, np.isfinite(b)) and close[fa].all())


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


Outcome = np.ndarray | _Raised | None


@dataclass(frozen=True)
class _Seen:
    """One 2-D diagnostic input and the student's outcome on the form of it that ran."""

    probe: DiagnosticProbe  # the 2-D input: references and wrong implementations run on it
    asked: DiagnosticProbe  # the form whose outcome is used (the 2-D one, or a batched copy)
    result: CallResult | None
    student: Outcome  # batched outputs reduced to batch element 0, comparable with the 2-D


def diagnose(
    kind: str, probes: Sequence[DiagnosticProbe], results: Sequence[CallResult | None]
) -> list[str]:
    """The misconception codes the student's outputs show, in the catalogue's order."""
    codes: set[str] = set()
    k = kind_get(kind)
    ref_func = k.reference
    outcomes = [_student_outcome(r) for r in results]
    seen = _seen(probes, results, outcomes)
    refs = [_outcome(ref_func, s.probe) for s in seen]

    for item, ref in zip(seen, refs, strict=True):
        if _mutated(item.asked.call, item.result):
            codes.add("mutates-input")
        arrays = isinstance(item.student, np.ndarray) and isinstance(ref, np.ndarray)
        if arrays and item.student.shape != ref.shape:
            codes.add("wrong-shape")
        if ragged_return(_error(item.result)):
            codes.add("wrong-shape")
        if LARGE in item.probe.tags and _raised_with(item.result, _OVERFLOW):
            codes.add("unstable-softmax")  # math.exp raises where np.exp returns inf

    if _overflows_only_when_large(seen):
        codes.add("unstable-softmax")

    decimals = rounded_decimals([s.student for s in seen if PLAIN in s.probe.tags])
    if decimals is not None:
        codes.add("rounded-output")

    # Any constant, not only the ones of the known wrong implementations below.
    students = [s.student for s in seen]
    bases = [s.probe for s in seen]
    if k.weight_triples is not None and _constant_scale(k, bases, students):
        codes.add("hardcoded-scale")
    if k.other_axes is not None and _softmax_other_axis(k, seen, refs):
        codes.add("softmax-wrong-axis")

    if k.rules is not None:
        codes |= k.rules(bases, refs, students, set(codes))

    impls = [impl for impl in k.wrong_implementations if BATCH not in impl.tags]
    for impl in impls:
        if impl.code not in codes and _matches(impl, bases, refs, students, decimals):
            codes.add(impl.code)
    codes |= _pairs(k, bases, refs, students, decimals)

    codes |= _batch_codes(k, probes, results, outcomes, codes)
    return [code for code in CODES if code in codes]


def _seen(
    probes: Sequence[DiagnosticProbe],
    results: Sequence[CallResult | None],
    outcomes: Sequence[Outcome],
) -> list[_Seen]:
    """Each 2-D input with the first of its forms (2-D, then with batch axes) that returned an
    array: a function that only works on 3-D input is diagnosed on the 3-D outputs."""
    copies: dict[int, list[int]] = {}
    for j, probe in enumerate(probes):
        if probe.base is not None:
            copies.setdefault(probe.base, []).append(j)
    seen = []
    for i, probe in enumerate(probes):
        if probe.base is not None or probe.form:
            continue
        group = [i, *sorted(copies.get(i, []), key=lambda j: probes[j].form)]
        j = next((j for j in group if isinstance(outcomes[j], np.ndarray)), i)
        student = _batch_element_0(outcomes[j], probes[j].form)
        if student is RAISED and text_cause(_error(results[j])) == BATCH_FIXED_NDIM:
            student = None  # raised for its number of dimensions: the batch code says so
        seen.append(_Seen(probe, probes[j], results[j], student))
    return seen


def _batch_element_0(out: Outcome, form: int) -> Outcome:
    if not form or not isinstance(out, np.ndarray):
        return out
    if out.shape[:form] != (BATCH_SIZE,) * form:
        return out  # not even the batch shape: compared as it is (a wrong shape)
    return out[(0,) * form]


def _matches(
    impl: Any,
    probes: Sequence[DiagnosticProbe],
    refs: Sequence[Outcome],
    students: Sequence[Outcome],
    decimals: int | None = None,
) -> bool:
    """Does the student agree with ``impl`` on every input where ``impl`` differs from the
    reference (and on at least one actual output: two functions that both raise are not
    evidence of the same mistake)? Rounded outputs are compared with the rounded wrong one."""
    differing = matched = matched_arrays = 0
    for probe, ref, student in zip(probes, refs, students, strict=True):
        if not (impl.tags & probe.tags) or student is None:
            continue
        if not _differs(impl.func, probe, ref):
            continue  # this input does not tell the two apart
        wrong_out = _outcome(impl.func, probe)
        differing += 1
        target, atol = wrong_out, MATCH_ATOL
        if decimals is not None and isinstance(wrong_out, np.ndarray):
            target, atol = np.round(wrong_out, decimals), MATCH_ATOL + 1.01 * 10.0**-decimals
        if _same(student, target, MATCH_RTOL, atol) and not _same(
            student, ref, MATCH_RTOL, MATCH_ATOL
        ):
            matched += 1
            matched_arrays += isinstance(wrong_out, np.ndarray)
    return bool(differing and matched == differing and matched_arrays)


def _overflows_only_when_large(seen: Sequence[_Seen]) -> bool:
    """NaN or infinity on the large-score inputs only, whatever formula produced it (naive
    exp, a log-sum-exp without the shift, ...): the symptom of an unstable softmax."""
    plain = [s.student for s in seen if PLAIN in s.probe.tags]
    large = [s.student for s in seen if LARGE in s.probe.tags]
    finite_plain = [p for p in plain if isinstance(p, np.ndarray)]
    if not finite_plain or not all(np.all(np.isfinite(p)) for p in finite_plain):
        return False
    return any(isinstance(out, np.ndarray) and not np.all(np.isfinite(out)) for out in large)


def _error(result: CallResult | None) -> str:
    return (result.error or "") if result is not None else ""


def _pairs(
    kind: Kind,
    probes: Sequence[DiagnosticProbe],
    refs: Sequence[Outcome],
    students: Sequence[Outcome],
    decimals: int | None,
) -> set[str]:
    """Codes of two mistakes made at once: the student agrees, on every diagnostic input, with
    a variant that has exactly two of the catalogued mistakes (the single ones are matched
    above). Stricter than a single match: every input counts, not only the telling ones.
    The options are those of the kind's wrong implementations (``WrongImplementation.variant``)."""
    func = kind.variant
    if func is None or not any(isinstance(s, np.ndarray) for s in students):
        return set()
    wrong_options = _variant_options(kind.wrong_implementations)
    found: set[str] = set()
    for (g1, o1, c1), (g2, o2, c2) in itertools.combinations(wrong_options, 2):
        if g1 == g2:
            continue
        one, two = {g1: o1}, {g2: o2}
        if _agrees_everywhere(func, {**one, **two}, probes, refs, students, decimals) and not (
            # Both mistakes must show: where the second changes nothing on these inputs (a
            # naive softmax on scores too small to overflow), the first alone is the diagnosis.
            _agrees_everywhere(func, one, probes, refs, students, decimals)
            or _agrees_everywhere(func, two, probes, refs, students, decimals)
        ):
            found |= {c1, c2}
    return found


def _variant_options(impls: Sequence[WrongImplementation]) -> list[tuple[str, str, str]]:
    """(keyword, option, code) of every single mistake the variant function can make."""
    return [(*impl.variant, impl.code) for impl in impls if impl.variant is not None]


def _agrees_everywhere(
    func: Any,
    kwargs: dict[str, str],
    probes: Sequence[DiagnosticProbe],
    refs: Sequence[Outcome],
    students: Sequence[Outcome],
    decimals: int | None,
) -> bool:
    differs = False
    for probe, ref, student in zip(probes, refs, students, strict=True):
        if student is None:
            continue
        out = _outcome(func, probe, kwargs)
        atol = MATCH_ATOL
        if decimals is not None and isinstance(out, np.ndarray):
            out, atol = np.round(out, decimals), MATCH_ATOL + 1.01 * 10.0**-decimals
        if not _same(student, out, MATCH_RTOL, atol):
            return False
        differs = differs or _differs(func, probe, ref, kwargs)
    return differs


def _raised_with(result: CallResult | None, needle: str) -> bool:
    return result is not None and result.output is None and needle in (result.error or "")


def _softmax_other_axis(kind: Kind, seen: Sequence[_Seen], refs: Sequence[Outcome]) -> bool:
    """True when, wherever the student's softmax is wrong, it is the softmax along another
    axis (or over the whole array, or a sum that lost its axis): a hard-coded ``axis=1`` or
    ``axis=0`` is right on some inputs and this on the others."""
    differing = 0
    for item, ref in zip(seen, refs, strict=True):
        student = item.student
        if PLAIN not in item.probe.tags or not isinstance(student, np.ndarray):
            continue
        if _same(student, ref, MATCH_RTOL, MATCH_ATOL):
            continue
        differing += 1
        others = _memo(item.probe, "other-axes", lambda probe=item.probe: kind.other_axes(probe))
        if not any(_same(student, o, MATCH_RTOL, MATCH_ATOL) for o in others):
            return False
    return differing > 0


def _scale_changes(
    kind: Kind, probe: DiagnosticProbe, out_2d: np.ndarray, out_batched: np.ndarray
) -> bool:
    """Do the weights of the 2-D call and of batch element 0 (the same input) show two
    different constant scales?"""
    scales = []
    for out in (out_2d, out_batched):
        triples = kind.weight_triples(probe.call, out) if kind.weight_triples else None
        if not triples:
            return False
        found = [effective_scale(q, k, w) for q, k, w in triples]
        if any(c is None for c in found):
            return False
        scales.append(found[0])
    return abs(scales[0] / scales[1] - 1.0) > SCALE_SPREAD


def _batch_codes(
    kind: Kind,
    probes: Sequence[DiagnosticProbe],
    results: Sequence[CallResult | None],
    outcomes: Sequence[Outcome],
    codes: set[str],
) -> set[str]:
    """At most one batch code: the function works for some numbers of dimensions and not for
    others, with the cause where a wrong implementation, an exception or a shape shows it
    (or ``mask-shape-exact``, when batch axes work and only a mask that broadcasts fails).
    Batched outputs that merely disagree with the 2-D ones count only where the 2-D output is
    right: a function wrong in 2-D is not said to have a batch mistake for that alone."""
    texts: list[str] = []
    failed = np_dot = fixed_ndim = False

    def right_2d(i: int) -> bool:
        return _same(outcomes[i], _outcome(kind.reference, probes[i]), MATCH_RTOL, MATCH_ATOL)

    if not kind.batch_copies:
        # The plain inputs have several numbers of dimensions (softmax: one, two and three).
        plain = [i for i, p in enumerate(probes) if PLAIN in p.tags]
        if any(isinstance(outcomes[i], np.ndarray) for i in plain):
            texts = [results[i].error or "" for i in plain if outcomes[i] is RAISED]
            if codes & WRONG_AXIS_CODES:
                # A hard-coded axis=1 raises on 1-D input: the wrong axis says it already.
                texts = [t for t in texts if _AXIS_ERROR not in t]
            # Only a recognised cause: a softmax that raises on some shapes for another reason
            # (a sum without keepdims that cannot broadcast) is named by what it computes.
            texts = [t for t in texts if text_cause(t) == BATCH_FIXED_NDIM]
            fixed_ndim = _right_up_to_a_rank(kind, probes, outcomes, plain)
            failed = bool(texts) or fixed_ndim
    else:
        groups: dict[int, list[int]] = {}
        for j, probe in enumerate(probes):
            if probe.base is not None:
                groups.setdefault(probe.base, [probe.base]).append(j)
        if _only_the_broadcast_mask_fails(kind, probes, outcomes, groups.values(), codes):
            return {MASK_SHAPE_EXACT}
        for group in groups.values():
            if not any(isinstance(outcomes[j], np.ndarray) for j in group):
                continue  # raises whatever the dimensions: not a batch problem
            for j in group:
                if outcomes[j] is RAISED:
                    failed = True
                    texts.append(_error(results[j]))
            if outcomes[group[0]] is RAISED:
                # Right with batch axes, wrong without: whatever the line, the code assumes a
                # number of dimensions (a loop over Q.shape[0], 3-D-only transposes, ...).
                fixed_ndim = True
            base = outcomes[group[0]]
            if not isinstance(base, np.ndarray) or LARGE in probes[group[0]].tags:
                continue
            for j in group[1:]:
                out = outcomes[j]
                if not isinstance(out, np.ndarray):
                    continue
                lead = (BATCH_SIZE,) * probes[j].form
                if out.shape == lead + base.shape:
                    element_0 = out[(0,) * probes[j].form]
                    if _same(element_0, base, MATCH_RTOL, MATCH_ATOL):
                        continue
                    # Batch element 0 is the 2-D input: it must agree. Disagreeing shows a batch
                    # mistake only in a function right in 2-D; one already wrong there (a
                    # softmax over axis 0, the queries) is wrong differently with batch axes for
                    # the same reason, which its 2-D diagnosis names.
                    failed |= right_2d(group[0])
                    if WEIGHTS in probes[group[0]].tags and _scale_changes(
                        kind, probes[group[0]], base, element_0
                    ):
                        # A scale that changes with the number of dimensions was read from a
                        # positive index (K.shape[0], Q.shape[1], ...), right in 2-D or not.
                        failed = fixed_ndim = True
                else:
                    failed = True
                    np_dot |= out.shape == lead + base.shape[:-1] + lead + base.shape[-1:]

    # Wrong implementations that are right in 2-D and wrong with batch axes.
    # (Not on masked or large scores, where -1e9 and -inf, or overflow, differ in other ways.)
    usable = [i for i, p in enumerate(probes) if p.form and not p.tags & {MASK, LARGE}]
    batch_probes = [replace(probes[i], tags=probes[i].tags | {BATCH}) for i in usable]
    refs = [_outcome(kind.reference, p) for p in batch_probes]
    students = [outcomes[i] for i in usable]
    for impl in kind.wrong_implementations:
        if BATCH in impl.tags and _matches(impl, batch_probes, refs, students):
            return {impl.code}
    if not failed:
        return set()
    if fixed_ndim:
        return {BATCH_FIXED_NDIM}
    causes = {text_cause(t) for t in texts}
    if np_dot:
        causes.add(BATCH_NP_DOT)
    for code in BATCH_CODES:
        if code in causes:
            return {code}
    return {BATCH_UNSUPPORTED}


def _right_up_to_a_rank(
    kind: Kind, probes: Sequence[DiagnosticProbe], outcomes: Sequence[Outcome], plain: list[int]
) -> bool:
    """Right on every plain input of some numbers of dimensions and raising on every input of
    the others, whatever the exception says: a max or sum shaped for a matrix (by np.tile, .T
    or a missing keepdims) that cannot broadcast in 3-D is code for vectors and matrices, and
    a loop over rows with np.diag and np.outer is code for matrices only."""
    right, raised = set(), set()
    for i in plain:
        ndim = np.ndim(probes[i].call.args[0])
        if outcomes[i] is RAISED:
            raised.add(ndim)
        elif outcomes[i] is not None:
            ref = _outcome(kind.reference, probes[i])
            if not _same(outcomes[i], ref, MATCH_RTOL, MATCH_ATOL):
                return False
            right.add(ndim)
    # Code for matrices only (a loop over rows with np.diag and np.outer) is right in 2-D and
    # raises in 1-D and 3-D: every number of dimensions is either all right or all raised.
    return bool(right and raised) and right.isdisjoint(raised)


def _only_the_broadcast_mask_fails(
    kind: Kind,
    probes: Sequence[DiagnosticProbe],
    outcomes: Sequence[Outcome],
    groups: Iterable[list[int]],
    codes: set[str],
) -> bool:
    """Every unmasked input gives, with batch axes, what it gives in 2-D, and unrelated batch
    elements stay apart (the reference's output or a named mistake's: a batch folded into the
    sequence axis fails the mask too), while every masked input (its mask kept 2-D) returns in
    2-D and raises with batch axes: the mask must have the scores' shape (``scores[~mask]``)."""
    named = [i.func for i in kind.wrong_implementations if i.code in codes and BATCH not in i.tags]
    unrelated = [i for i, p in enumerate(probes) if p.form and p.base is None]
    for i in unrelated:
        out = outcomes[i]
        if not isinstance(out, np.ndarray) or not any(
            _same(out, _outcome(f, probes[i]), MATCH_RTOL, MATCH_ATOL)
            for f in (kind.reference, *named)
        ):
            return False
    masked = unmasked = 0
    for group in groups:
        base = outcomes[group[0]]
        if not isinstance(base, np.ndarray):
            return False
        if MASK in probes[group[0]].tags:
            masked += 1
            if any(outcomes[j] is not RAISED for j in group[1:]):
                return False
            continue
        unmasked += 1
        for j in group[1:]:
            out = _batch_element_0(outcomes[j], probes[j].form)  # as it is if not batch-shaped
            if not isinstance(out, np.ndarray) or not _same(out, base, MATCH_RTOL, MATCH_ATOL):
                return False
    return bool(masked and unmasked and unrelated)


def _constant_scale(
    kind: Kind,
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
        triples = kind.weight_triples(probe.call, student) if kind.weight_triples else None
        if triples is None:
            return False
        for q, k, w in triples:
            c = effective_scale(q, k, w)
            if c is None:
                return False
            scales.append(c)
    if len(scales) < 2:
        return False
    spread = max(scales) / min(scales) - 1.0
    return spread < SCALE_SPREAD and abs(scales[0] - 1.0) > 1e-2
