"""Scaled dot-product attention: ``attention(Q, K, V, mask=None)``. No Django imports.

Everything that is particular to this kind: the reference (as students would write it), the
known wrong implementations, the diagnostic inputs, the visible examples and the pictures.
The wrong implementations are OUR trusted functions, each self-contained (it uses only ``np``
and ``math``) so that ``WrongImplementation.source`` is a complete student-style module for
the golden suite and the admin's Validate; the diagnosis calls them in-process.
"""

# ruff: noqa: RUF001, RUF003 - the pictures' text uses ×, −, – and … on purpose

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from grader.engine import messages, pictures, reference
from grader.engine.executors.base import Arg, Call, CallResult
from grader.engine.inputs import WORKED_K, WORKED_Q, WORKED_V, attention_call, key_mask, unit
from grader.engine.kinds.attention_mistakes import (
    attention_d_k_from_shape_1,
    attention_divide_by_2,
    attention_divide_by_4,
    attention_divide_by_8,
    attention_divide_by_16,
    attention_global_max,
    attention_mask_exact_shape,
    attention_mask_ignored,
    attention_mask_inverted,
    attention_mask_nan_fill,
    attention_mask_zero_fill,
    attention_matmul_dot_t,
    attention_missing_scale,
    attention_naive_softmax,
    attention_np_dot_t,
    attention_np_dot_values,
    attention_returns_weights,
    attention_rounded,
    attention_scale_after_softmax,
    attention_scale_by_d,
    attention_scale_values,
    attention_scales_q_in_place,
    attention_softmax_axis_1,
    attention_softmax_over_queries,
    attention_sqrt_d_v,
    attention_sqrt_n_queries,
    attention_sqrt_seq_len,
    attention_transpose_3d,
    attention_unnormalized,
    attention_variant,
)
from grader.engine.kinds.base import (
    BATCH,
    LARGE,
    MASK,
    PLAIN,
    WEIGHTS,
    DiagnosticProbe,
    Kind,
    WeightTriples,
    WrongImplementation,
    batched,
    catalogue_of,
    probe,
)
from grader.engine.trial_args import (
    MSG_KEY_ROWS,
    MSG_LAST_DIMS,
    ROLE_ARRAY,
    ROLE_MASK,
    ArgSpec,
    TrialCase,
    TrialInputError,
    array_arg,
    broadcast_shapes,
    check_mask,
    check_output,
    custom_case,
    mask_arg,
)

NAME = reference.KIND_ATTENTION

# The reference solution as students would write it: the text stored in
# Exercise.reference_solution by the seed migration, run through the sandbox by Validate.
REFERENCE_SOURCE = '''import numpy as np


def attention(Q, K, V, mask=None):
    """softmax(Q Kᵀ / √d_k) V; mask is True where a query may attend to a key."""
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V
'''

_MASKED = frozenset({MASK})
_LARGE = frozenset({LARGE})
_BATCH = frozenset({BATCH})


_wrong = catalogue_of(NAME)


WRONG_IMPLEMENTATIONS: tuple[WrongImplementation, ...] = (
    _wrong("missing-scale", attention_missing_scale, variant=("scale", "none")),
    _wrong("scale-by-d", attention_scale_by_d, variant=("scale", "d_k")),
    _wrong("scale-values", attention_scale_values),
    _wrong("hardcoded-scale", attention_divide_by_8),
    _wrong("hardcoded-scale", attention_divide_by_2),
    _wrong("hardcoded-scale", attention_divide_by_4),
    _wrong("hardcoded-scale", attention_divide_by_16),
    _wrong("wrong-dimension", attention_sqrt_d_v, variant=("scale", "sqrt_d_v")),
    _wrong("wrong-dimension", attention_sqrt_seq_len, variant=("scale", "sqrt_m")),
    _wrong("wrong-dimension", attention_sqrt_n_queries, variant=("scale", "sqrt_n")),
    _wrong("scale-after-softmax", attention_scale_after_softmax),
    _wrong("softmax-wrong-axis", attention_softmax_over_queries, variant=("softmax", "queries")),
    _wrong("unstable-softmax", attention_naive_softmax, _LARGE, ("softmax", "naive")),
    _wrong("unnormalized-weights", attention_unnormalized, variant=("softmax", "unnormalized")),
    _wrong("mask-ignored", attention_mask_ignored, _MASKED, ("mask_how", "ignored")),
    _wrong("mask-inverted", attention_mask_inverted, _MASKED, ("mask_how", "inverted")),
    _wrong("mutates-input", attention_scales_q_in_place),
    _wrong("wrong-shape", attention_returns_weights),
    _wrong("unstable-softmax", attention_global_max, _LARGE, ("softmax", "global_max")),
    _wrong("mask-wrong-fill", attention_mask_zero_fill, _MASKED, ("mask_how", "zero")),
    _wrong("mask-wrong-fill", attention_mask_nan_fill, _MASKED, ("mask_how", "nan")),
    _wrong("rounded-output", attention_rounded),
    _wrong("batch-transpose", attention_matmul_dot_t, _BATCH),
    _wrong("batch-transpose", attention_np_dot_t, _BATCH),
    _wrong("batch-np-dot", attention_np_dot_values, _BATCH),
    _wrong("batch-fixed-ndim", attention_transpose_3d, _BATCH),
    # Right in 2-D only, but the mistake (and its fix, axis=-1) is the axis, not the batch.
    _wrong("softmax-wrong-axis", attention_softmax_axis_1, _BATCH),
    _wrong("batch-fixed-ndim", attention_d_k_from_shape_1, _BATCH),
    # Right with batch axes and with a mask of the scores' shape; a broadcast mask raises.
    _wrong("mask-shape-exact", attention_mask_exact_shape, _BATCH),
)


# --- diagnostic inputs -------------------------------------------------------------------------


def diagnostic_probes(rng: np.random.Generator) -> list[DiagnosticProbe]:
    """Inputs that tell the known misconceptions apart. Plain inputs send their arrays back
    (``return_inputs``) so an in-place change is seen; every 2-D input comes again with leading
    batch axes (``batched``)."""
    probes = [
        # Several d_k, with d_v, n and m all different from d_k, so a constant, √d_v or √m
        # is right on at most one of them.
        probe(
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
        probe(
            attention_call(unit(rng, (5, 16)), unit(rng, (7, 16)), unit(rng, (7, 3)), mask),
            MASK,
        )
    )
    # Every row's scores are offset by ±1e3 (column 0 of Q times column 0 of K, over √16):
    # exp() overflows (or underflows to 0/0) in every row unless the max is subtracted.
    q, k = unit(rng, (4, 16)), unit(rng, (6, 16))
    b = np.sqrt(1e3 * 4.0)
    q[:, 0], k[:, 0] = np.array([1.0, -1.0, 1.0, -1.0]) * b, b
    probes.append(probe(attention_call(q, k, unit(rng, (6, 3))), LARGE))
    # V = identity: the output is the weights, so the scale actually used can be measured,
    # whatever constant a student hard-coded (diagnosis_signs.effective_scale).
    probes += [
        probe(attention_call(unit(rng, (n, d_k)), unit(rng, (m, d_k)), np.eye(m)), WEIGHTS)
        for n, m, d_k in ((5, 6, 9), (4, 7, 36), (6, 5, 100))
    ]
    # A second mask where every query has an allowed and a blocked key and no key is
    # blocked for every query: masked scores set to NaN still give NaN, a softmax over the
    # queries (NaN on the first mask's all-blocked key) does not.
    rows, cols = np.indices((6, 8))
    mask = (rows + cols) % 3 != 0
    probes.append(
        probe(
            attention_call(unit(rng, (6, 16)), unit(rng, (8, 16)), unit(rng, (8, 4)), mask),
            MASK,
        )
    )
    probes += batched(probes, 3)  # Q, K and V; the mask broadcasts
    # The transpose probe: batch = m = d_k, so `Q @ K.T` (which reverses the batch axis
    # too) runs and returns the right shape with wrong values that name the cause.
    t = 4
    probes.append(
        DiagnosticProbe(
            attention_call(unit(rng, (t, 5, t)), unit(rng, (t, t, t)), unit(rng, (t, t, 3))),
            frozenset({BATCH}),
            form=1,
        )
    )
    return probes


def weight_triples(call: Call, out: np.ndarray) -> WeightTriples:
    """(Q, K, weights) of a WEIGHTS probe: with V = identity the output is the weights."""
    q, k = (np.asarray(a, dtype=np.float64) for a in call.args[:2])
    return [(q, k, out)]


# --- the common checks' inputs (checks.common) -------------------------------------------------

PARAMETERS = ("Q", "K", "V", "mask")


def stability_call(rng: np.random.Generator, size: float, dtype: type) -> tuple[Call, str]:
    d_k = 16
    # Rows alternate between +size and -size offsets (the sign is part of what is tested:
    # exp overflows on one, underflows to 0/0 on the other).
    signs = np.where(np.arange(6) % 2 == 0, 1.0, -1.0)
    q, k = unit(rng, (6, d_k)), unit(rng, (8, d_k))
    # Column 0 adds the same offset (a_i · b / √d_k = ±size) to every score of row i.
    b = np.sqrt(size * np.sqrt(d_k))
    q[:, 0], k[:, 0] = signs * b, b
    v = unit(rng, (8, 5))
    call = attention_call(q.astype(dtype), k.astype(dtype), v.astype(dtype))
    return call, f"Q, K, V with scores of magnitude about {size:g}"


def normalized_calls(rng: np.random.Generator) -> list[tuple[Call, str, int]]:
    n, m, d_k = 7, 9, 16
    call = attention_call(unit(rng, (n, d_k)), unit(rng, (m, d_k)), np.eye(m))
    return [(call, f"random Q and K (d_k = {d_k}) with V = identity", -1)]


def no_mutation_call(rng: np.random.Generator) -> tuple[Call, str]:
    n, m, d_k = 5, 6, 16
    mask = np.ones((n, m), dtype=bool)
    mask[:, -1] = False
    call = attention_call(
        unit(rng, (n, d_k)),
        unit(rng, (m, d_k)),
        unit(rng, (m, 4)),
        mask,
        return_inputs=True,
    )
    return call, f"random Q, K, V (d_k = {d_k}) with a mask"


# --- trials: the visible examples and a custom input ------------------------------------------

ARGUMENTS: tuple[ArgSpec, ...] = (
    ArgSpec("Q", ROLE_ARRAY, "(..., n, d_k)", 2, 4),
    ArgSpec("K", ROLE_ARRAY, "(..., m, d_k)", 2, 4),
    ArgSpec("V", ROLE_ARRAY, "(..., m, d_v)", 2, 4),
    ArgSpec("mask", ROLE_MASK, 'optional: true/false, (n, m), or "causal"', optional=True),
)


def _arg(name: str) -> ArgSpec:
    return next(a for a in ARGUMENTS if a.name == name)


_CAUSAL_3 = np.tril(np.ones((3, 3), dtype=bool))
# Two sequences of 2 queries over 3 keys (n != m), d_k = 2, d_v = 2.
_BATCH_Q = np.array([[[1.0, 0.0], [0.0, 1.0]], [[2.0, 1.0], [-1.0, 0.0]]])
_BATCH_K = np.array([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[0.0, 2.0], [1.0, -1.0], [2.0, 0.0]]])
_BATCH_V = np.array([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])


def visible_examples() -> list[TrialCase]:
    qkv = ("Q", "K", "V")
    return [
        TrialCase(
            "worked-example",
            "The worked example (3 tokens, d_k = 4)",
            "The example worked by hand on the question page: the output is "
            "[[0.814, 0.494], [0.494, 0.814], [0.767, 0.616]].",
            qkv,
            (WORKED_Q.copy(), WORKED_K.copy(), WORKED_V.copy()),
        ),
        TrialCase(
            "masked",
            "A causal mask",
            "The worked example where each token attends only to itself and the tokens before "
            "it (mask True = may attend): the first row can only copy V's first row.",
            (*qkv, "mask"),
            (WORKED_Q.copy(), WORKED_K.copy(), WORKED_V.copy(), _CAUSAL_3.copy()),
        ),
        TrialCase(
            "batched",
            "A batch of two (n = 2 queries, m = 3 keys)",
            "Leading batch dimension of 2: each sequence attends within itself; "
            "n differs from m, so a transposed score matrix shows up as a shape error.",
            qkv,
            (_BATCH_Q.copy(), _BATCH_K.copy(), _BATCH_V.copy()),
        ),
    ]


def trial_case(spec: Mapping[str, Any], rng: np.random.Generator) -> TrialCase:
    q, k, v = (array_arg(_arg(n), spec[n], rng) for n in ("Q", "K", "V"))
    if q.shape[-1] != k.shape[-1]:
        raise TrialInputError(MSG_LAST_DIMS.format(q=q.shape[-1], k=k.shape[-1]))
    if k.shape[-2] != v.shape[-2]:
        raise TrialInputError(MSG_KEY_ROWS.format(k=k.shape[-2], v=v.shape[-2]))
    batch = broadcast_shapes([("Q", q.shape[:-2]), ("K", k.shape[:-2]), ("V", v.shape[:-2])])
    n, m = q.shape[-2], k.shape[-2]
    check_output((*batch, n, v.shape[-1]))
    named: list[tuple[str, Arg]] = [("Q", q), ("K", k), ("V", v)]
    if spec.get("mask") is not None:
        mask = mask_arg(spec["mask"], n, m)
        check_mask(mask, (*batch, n, m))
        named.append(("mask", mask))
    return custom_case(named)


# --- pictures: the student's weights beside the reference's ------------------------------------

EXAMPLE_QUERIES = 6
EXAMPLE_KEYS = 6
EXAMPLE_DK = 16
SWEEP_DK: tuple[int, ...] = (4, 8, 16, 32, 64, 128, 256, 512)
# 32 queries average the top weight well enough for a picture, and keep the sweep's inputs
# (d_k up to 512) to a quarter of what crosses the sandbox with 128: the pictures ride in
# every grade's run, so their size is paid by every submission.
SWEEP_QUERIES = 32
SWEEP_KEYS = 16

PICTURES = frozenset(pictures.PICTURES) - {"scale-by-model-width", "unstable-softmax"}


# The pictures' inputs are fixed, so each worker draws them (and computes their reference
# weights) once: drawing the sweep alone costs more than grading a correct submission.
@functools.cache
def plot_example() -> tuple[np.ndarray, np.ndarray]:
    """Q and K of the example heatmap (the softmax pictures' scores come from them too)."""
    rng = pictures.plot_rng(1)
    Q = rng.standard_normal((EXAMPLE_QUERIES, EXAMPLE_DK))
    K = rng.standard_normal((EXAMPLE_KEYS, EXAMPLE_DK))
    pictures.frozen(Q, K)
    return Q, K


@functools.cache
def _sweep_draw() -> tuple[np.ndarray, np.ndarray]:
    rng = pictures.plot_rng(2)
    Q = rng.standard_normal((SWEEP_QUERIES, SWEEP_DK[-1]))
    K = rng.standard_normal((SWEEP_KEYS, SWEEP_DK[-1]))
    pictures.frozen(Q, K)
    return Q, K


@functools.cache
def _sweep(d_k: int) -> tuple[np.ndarray, np.ndarray]:
    """The first d_k columns of one draw: nested inputs make the curve smooth in d_k. Copied
    once into arrays of their own: a column slice would be copied again at every grade to
    cross into the sandbox."""
    Q, K = _sweep_draw()
    Qd, Kd = np.ascontiguousarray(Q[:, :d_k]), np.ascontiguousarray(K[:, :d_k])
    pictures.frozen(Qd, Kd)
    return Qd, Kd


@functools.cache
def _sweep_reference(d_k: int) -> np.ndarray:
    ref = reference.attention_weights(*_sweep(d_k))
    pictures.frozen(ref)
    return ref


@functools.cache
def _example_reference() -> np.ndarray:
    ref = reference.attention_weights(*plot_example())
    pictures.frozen(ref)
    return ref


def plot_calls() -> tuple[Call, ...]:
    """V = identity, so the output is the weights: the example, then the d_k sweep."""
    Q, K = plot_example()
    calls = [Call(args=(Q, K, np.eye(EXAMPLE_KEYS)))]
    for d_k in SWEEP_DK:
        Qs, Ks = _sweep(d_k)
        calls.append(Call(args=(Qs, Ks, np.eye(SWEEP_KEYS))))
    return tuple(calls)


def plots_of(results: Sequence[CallResult]) -> dict[str, Any]:
    student, error = pictures.student_array(results, 0, (EXAMPLE_QUERIES, EXAMPLE_KEYS))
    example = pictures.example_dict(
        student,
        _example_reference(),
        error,
        title=f"Attention weights: {EXAMPLE_QUERIES} queries × {EXAMPLE_KEYS} keys, d_k = "
        f"{EXAMPLE_DK}",
        note="Random unit-variance Q and K made for this picture (not a hidden input), called "
        "with V = identity so the output is the weights.",
        rows=pictures.labels("q", EXAMPLE_QUERIES),
        cols=pictures.labels("k", EXAMPLE_KEYS),
        d_k=EXAMPLE_DK,
    )
    saturation = pictures.saturation_sweep(
        results,
        label="d_k",
        sizes=SWEEP_DK,
        reference_of=_sweep_reference,
        shape_of=lambda _: (SWEEP_QUERIES, SWEEP_KEYS),
        weights_of=lambda out, _: out,
        queries=SWEEP_QUERIES,
        keys=SWEEP_KEYS,
        col_prefix="k",
    )
    return {"example": example, "saturation": saturation}


KIND = Kind(
    name=NAME,
    reference=reference.attention,
    reference_source=REFERENCE_SOURCE,
    wrong_implementations=WRONG_IMPLEMENTATIONS,
    diagnostic_probes=diagnostic_probes,
    arguments=ARGUMENTS,
    visible_examples=visible_examples,
    trial_case=trial_case,
    plot_calls=plot_calls,
    plots=plots_of,
    pictures=PICTURES,
    values_check="shapes",
    parameters=PARAMETERS,
    stability_call=stability_call,
    no_mutation_call=no_mutation_call,
    normalized_calls=normalized_calls,
    not_normalized=messages.NOT_NORMALIZED,
    batch_copies=True,
    variant=attention_variant,
    weight_triples=weight_triples,
)
