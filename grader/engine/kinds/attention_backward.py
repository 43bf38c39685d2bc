"""Attention's backward pass: ``attention_backward(Q, K, V, dO, mask=None)``. No Django imports.

The student returns the tuple (dQ, dK, dV), the gradients of sum(O * dO) for
O = softmax(Q Kᵀ / √d_k, masked) V. Only arrays cross the sandbox, and numpy reads a tuple of
three arrays of one shape as one array: every input graded here has n_q = n_k and d_k = d_v, so
the tuple arrives as an array of shape (3, ..., n, d) (dQ, dK, dV in that order), and the
reference (``reference.attention_backward_stacked``) is stacked the same way. A tuple whose
parts have different shapes cannot be read as an array: the call fails, as a wrong shape does.

What is particular to this kind (see ``kinds.attention`` for the layout): its catalogue, whose
bodies are in ``attention_backward_mistakes`` with the variant that makes any two at once;
diagnostic inputs of two, three and four dimensions (no batched copies: the stacked output's
first axis is not a batch axis), a cube where ``.T`` happens to run, masked inputs and saturated
ones; a rule of its own for a gradient
kept alive where the reference's vanishes (the softmax backward's ``backward-vanishing-hidden``);
and the pictures, the worked example's dQ and the largest entry of dQ as the scores grow.
"""

# ruff: noqa: RUF001, RUF003 - the pictures' text uses ×, −, √ and ⊙ on purpose

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from grader.engine import pictures, reference
from grader.engine.executors.base import Arg, Call, CallResult
from grader.engine.inputs import (
    WORKED_K,
    WORKED_Q,
    attention_backward_call,
    attention_backward_inputs,
    causal_mask,
    key_mask,
    unit,
)
from grader.engine.kinds.attention_backward_mistakes import (
    attention_backward_variant,
    backward_clips_p,
    backward_diagonal_only,
    backward_dk_untransposed,
    backward_dot_T,
    backward_dv_untransposed,
    backward_in_place,
    backward_mask_after_softmax,
    backward_mask_boolean_index,
    backward_mask_ignored,
    backward_mask_leak,
    backward_rounded,
    backward_scale_dropped,
    backward_softmax_constant,
    backward_two_dims_only,
    backward_unscaled,
    backward_unstable,
    backward_weights_constant,
)
from grader.engine.kinds.base import (
    BATCH,
    LARGE,
    MASK,
    PLAIN,
    DiagnosticProbe,
    Kind,
    WrongImplementation,
    catalogue_of,
    lost_only_where_saturated,
    probe,
)
from grader.engine.trial_args import (
    MSG_BACKWARD_SHAPES,
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
    shape_text,
)

NAME = reference.KIND_ATTENTION_BACKWARD

REFERENCE_SOURCE = '''import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    """Gradients (dQ, dK, dV) of sum(O * dO), O = softmax(Q K^T / sqrt(d_k)) V."""
    scale = np.sqrt(Q.shape[-1])
    S = Q @ np.swapaxes(K, -1, -2) / scale
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - np.max(S, axis=-1, keepdims=True))
    P = P / np.sum(P, axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))  # the softmax's backward
    dQ = dS @ K / scale
    dK = np.swapaxes(dS, -1, -2) @ Q / scale
    return dQ, dK, dV
'''

VANISHING_HIDDEN = "backward-vanishing-hidden"
MASK_SHAPE_EXACT = "mask-shape-exact"

_MASK = frozenset({MASK})
_LARGE = frozenset({LARGE})
_BATCH = frozenset({BATCH})


_wrong = catalogue_of(NAME)


WRONG_IMPLEMENTATIONS: tuple[WrongImplementation, ...] = (
    _wrong("missing-scale", backward_unscaled, variant=("scale", "none")),
    _wrong("backward-scale-dropped", backward_scale_dropped, variant=("scale", "dropped")),
    _wrong(
        "backward-softmax-constant", backward_softmax_constant, variant=("jacobian", "constant")
    ),
    _wrong("backward-softmax-constant", backward_weights_constant, variant=("jacobian", "none")),
    _wrong("backward-diagonal-only", backward_diagonal_only, variant=("jacobian", "diagonal")),
    _wrong("backward-transpose", backward_dv_untransposed, variant=("dv", "p")),
    _wrong("backward-transpose", backward_dk_untransposed, variant=("dk", "ds")),
    _wrong("backward-mask-leak", backward_mask_leak, _MASK, ("mask_how", "recomputed")),
    _wrong("mask-ignored", backward_mask_ignored, _MASK, ("mask_how", "ignored")),
    # The weights masked after the softmax, never renormalised.
    _wrong("unnormalized-weights", backward_mask_after_softmax, _MASK, ("mask_how", "after")),
    # Right where the scores are ordinary: the kind's rule names it (see _rules).
    _wrong(VANISHING_HIDDEN, backward_clips_p, _LARGE, ("jacobian", "clipped")),
    _wrong("unstable-softmax", backward_unstable, _LARGE, ("softmax", "naive")),
    _wrong("rounded-output", backward_rounded),
    _wrong("mutates-input", backward_in_place),
    # Right in 2-D; with batch axes .T raises, except on the cube probe, where it runs wrong.
    _wrong("batch-transpose", backward_dot_T, variant=("transpose", "T")),
    _wrong("batch-fixed-ndim", backward_two_dims_only, _BATCH),
    # Right with a mask of the scores' shape, raising with one that broadcasts: the kind's rule.
    _wrong(MASK_SHAPE_EXACT, backward_mask_boolean_index, _BATCH),
)


def reference_stacked(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, dO: np.ndarray, mask: np.ndarray | None = None
) -> np.ndarray:
    return reference.attention_backward_stacked(Q, K, V, dO, mask)


# --- diagnostic inputs -------------------------------------------------------------------------

# (..., n, d) of the plain inputs: matrices (one square), a cube (4, 4, 4) where `K.T` has the
# shape of `swapaxes(K, -1, -2)` and so runs with the wrong values, and 3-D and 4-D stacks.
_PLAIN_SHAPES = ((5, 3), (4, 4), (4, 4, 4), (2, 5, 3), (2, 2, 3, 4))
# Q and K multiplied by this on the saturated inputs: scores of std about 10² (× √d_k / √d_k),
# weights down to 1e-40 and a gradient into Q and K as small; then scores of about 10³.
SATURATION = 10.0
OVERFLOW = 35.0


def diagnostic_probes(rng: np.random.Generator) -> list[DiagnosticProbe]:
    """Inputs that tell the known misconceptions apart: plain ones of two to four dimensions
    (no batched copies, ``Kind.batch_copies`` is False), masked ones (a random mask of the
    scores' shape, then a causal mask shared by a batch) and saturated ones."""
    probes = []
    for shape in _PLAIN_SHAPES:
        Q, K, V, dO = attention_backward_inputs(rng, shape)
        probes.append(probe(attention_backward_call(Q, K, V, dO, return_inputs=True), PLAIN))
    Q, K, V, dO = attention_backward_inputs(rng, (6, 4))
    probes.append(probe(attention_backward_call(Q, K, V, dO, key_mask(rng, (6, 6))), MASK))
    Q, K, V, dO = attention_backward_inputs(rng, (2, 5, 3))
    probes.append(probe(attention_backward_call(Q, K, V, dO, causal_mask(5)), MASK))
    for shape in ((5, 4), (2, 4, 3)):
        Q, K, V, dO = attention_backward_inputs(rng, shape, SATURATION)
        probes.append(probe(attention_backward_call(Q, K, V, dO), LARGE))
    Q, K, V, dO = attention_backward_inputs(rng, (4, 4), OVERFLOW)
    probes.append(probe(attention_backward_call(Q, K, V, dO), LARGE))
    return probes


# On a saturated input a correct float64 gradient into Q and K is the reference's to within
# rounding of the largest weight's terms (about 1e-16 of |dP| |K|); a p clipped at 1e-7 is
# off by a million times that.
VANISHING_ATOL = 1e-10


def vanishing_kept(student: np.ndarray, ref: np.ndarray, scale: float) -> bool:
    """Does the gradient into Q or K (the first two parts) differ from the reference's by more
    than rounding, relative to the inputs' ``scale``?"""
    return bool(np.any(np.abs(student[:2] - ref[:2]) > VANISHING_ATOL * scale))


def _right(student: Any, ref: Any) -> bool:
    return (
        isinstance(student, np.ndarray)
        and student.shape == ref.shape
        and bool(np.allclose(student, ref, rtol=1e-3, atol=1e-4))
    )


def mask_shape_exact(
    probes: Sequence[DiagnosticProbe], refs: Sequence[Any], students: Sequence[Any]
) -> bool:
    """Right on every plain input and with a mask of the scores' own shape, raising with one
    that must broadcast (a causal (n, n) mask over a batch): ``scores[~mask] = -np.inf``."""
    exact_right = broadcast_raised = False
    for item, ref, student in zip(probes, refs, students, strict=True):
        if PLAIN in item.tags and not _right(student, ref):
            return False
        if MASK not in item.tags or student is None:
            continue
        Q, K = item.call.args[0], item.call.args[1]
        exact = np.shape(item.call.args[4]) == (*Q.shape[:-1], K.shape[-2])
        if exact:
            if not _right(student, ref):
                return False
            exact_right = True
        elif isinstance(student, np.ndarray):
            return False
        else:
            broadcast_raised = True
    return exact_right and broadcast_raised


def _rules(
    probes: Sequence[DiagnosticProbe],
    refs: Sequence[Any],
    students: Sequence[Any],
    codes: set[str],
) -> set[str]:
    """``mask-shape-exact`` (see ``mask_shape_exact``), and ``backward-vanishing-hidden``: right
    on every plain input, finite and of the right shape on the saturated ones, where the
    gradient into Q or K does not vanish with the reference's (a p clipped away from 0 or 1, an
    epsilon). Rounded outputs lose it for another reason."""
    if mask_shape_exact(probes, refs, students):
        return {MASK_SHAPE_EXACT}
    if "rounded-output" in codes:
        return set()

    def lost(probe: DiagnosticProbe, student: np.ndarray, ref: np.ndarray) -> bool:
        # vanishing_kept: the gradient into Q or K stayed where the reference's vanished.
        scale = float(np.max(np.abs(np.asarray(probe.call.args[1]))))
        return vanishing_kept(student, ref, scale)

    return {VANISHING_HIDDEN} if lost_only_where_saturated(probes, refs, students, lost) else set()


# --- the common checks' inputs (checks.common) -------------------------------------------------

PARAMETERS = ("Q", "K", "V", "dO", "mask")


def stability_call(rng: np.random.Generator, size: float, dtype: type) -> tuple[Call, str]:
    # Q and K of std √size: scores of std about `size`.
    Q, K, V, dO = attention_backward_inputs(rng, (5, 4), float(np.sqrt(size)), dtype)
    what = f"Q, K, V and dO of shape (5, 4), scores of magnitude about {size:g}"
    return attention_backward_call(Q, K, V, dO), what


def no_mutation_call(rng: np.random.Generator) -> tuple[Call, str]:
    Q, K, V, dO = attention_backward_inputs(rng, (5, 4))
    mask = causal_mask(5)
    call = attention_backward_call(Q, K, V, dO, mask, return_inputs=True)
    return call, "random Q, K, V and dO of shape (5, 4) and a causal mask"


# --- trials: the visible examples and a custom input ------------------------------------------

ARGUMENTS: tuple[ArgSpec, ...] = (
    ArgSpec("Q", ROLE_ARRAY, "queries, (..., n, d)", low=2),
    ArgSpec("K", ROLE_ARRAY, "keys, the shape of Q", low=2),
    ArgSpec("V", ROLE_ARRAY, "values, the shape of Q", low=2),
    ArgSpec("dO", ROLE_ARRAY, "upstream gradient of the output, the shape of Q", low=2),
    ArgSpec("mask", ROLE_MASK, 'optional: true = may attend, or "causal"', optional=True),
)

# V = K keeps every gradient the worked example's shape, (3, 4), so the tuple reads as one array.
_WORKED_DO = np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))


def visible_examples() -> list[TrialCase]:
    stack_q = np.stack([WORKED_Q, WORKED_Q[::-1]])
    stack_k = np.stack([WORKED_K, WORKED_K])
    return [
        TrialCase(
            "worked-example",
            "The worked example, dO picks the first output column",
            "Q and K of the worked example (3 tokens, d_k = 4), V = K so that dQ, dK and dV "
            "are all (3, 4), and dO = [1, 0, 0, 0] in every row: the answer is how the sum of "
            "the outputs' first column moves with every input. The output shows the tuple as "
            "numpy reads it, shape (3, 3, 4): dQ, dK, dV.",
            ("Q", "K", "V", "dO"),
            (WORKED_Q, WORKED_K, WORKED_K, _WORKED_DO),
        ),
        TrialCase(
            "masked",
            "With a causal mask",
            "The same inputs, query i allowed keys 0 … i: the first query sees only key 0, so "
            "its weight is exactly 1 and no gradient reaches Q's first row.",
            ("Q", "K", "V", "dO", "mask"),
            (WORKED_Q, WORKED_K, WORKED_K, _WORKED_DO, causal_mask(3)),
        ),
        TrialCase(
            "batched",
            "With a batch axis",
            "Two examples, shape (2, 3, 4): the worked example, then its queries in reverse "
            "order (so the first batch element's gradients are the worked example's).",
            ("Q", "K", "V", "dO"),
            (stack_q, stack_k, stack_k, np.stack([_WORKED_DO, _WORKED_DO])),
        ),
    ]


def trial_case(spec: Mapping[str, Any], rng: np.random.Generator) -> TrialCase:
    q_arg, k_arg, v_arg, do_arg, _ = ARGUMENTS
    arrays = [array_arg(a, spec[a.name], rng) for a in (q_arg, k_arg, v_arg, do_arg)]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        listed = ", ".join(
            f"{a.name} {shape_text(x.shape)}" for a, x in zip(ARGUMENTS, arrays, strict=False)
        )
        raise TrialInputError(MSG_BACKWARD_SHAPES.format(shapes=listed))
    shape = arrays[0].shape
    check_output((3, *shape))
    named: list[tuple[str, Arg]] = list(zip(PARAMETERS, arrays, strict=False))
    if spec.get("mask") is not None:
        n = shape[-2]
        mask = mask_arg(spec["mask"], n, n)
        check_mask(mask, (*broadcast_shapes([("Q", shape[:-2])]), n, n))
        named.append(("mask", mask))
    return custom_case(named)


# --- pictures: dQ of the worked example, and the largest entry of dQ as the scores grow -------

# Q multiplied by each factor, so the scores are: from the worked example's ×1 to far past it.
PLOT_SCALES = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
# dO small enough that the reference's largest |dQ| (and √d_k times it) stays below 1.
PLOT_DO_SCALE = 0.1

PICTURES = frozenset({VANISHING_HIDDEN, "backward-scale-dropped"})


def _plot_inputs(scale: float) -> tuple[np.ndarray, ...]:
    rng = pictures.plot_rng(7)
    Q = unit(rng, (6, 8))
    K, V = unit(rng, (6, 8)), unit(rng, (6, 8))
    dO = unit(rng, (6, 8)) * PLOT_DO_SCALE
    return Q * scale, K, V, dO


def plot_calls() -> tuple[Call, ...]:
    calls = [attention_backward_call(WORKED_Q, WORKED_K, WORKED_K, _WORKED_DO)]
    calls += [attention_backward_call(*_plot_inputs(scale)) for scale in PLOT_SCALES]
    return tuple(calls)


def _largest(a: np.ndarray | None) -> float | None:
    if a is None or not np.all(np.isfinite(a)):
        return None
    # Four significant digits, whatever the size: the curve spans many orders of magnitude.
    return float(f"{float(np.max(np.abs(a))):.4g}")


def plots_of(results: Sequence[CallResult]) -> dict[str, Any]:
    expected = reference_stacked(WORKED_Q, WORKED_K, WORKED_K, _WORKED_DO)
    out, err = pictures.student_array(results, 0, expected.shape)
    example = pictures.example_dict(
        out[0] if out is not None else None,
        expected[0],
        err,
        title="dQ on the worked example",
        note="Q and K of the worked example, V = K, dO = [1, 0, 0, 0] in every row: how the "
        "sum of the outputs' first column moves with each entry of Q.",
        rows=pictures.labels("query ", 3),
        cols=pictures.labels("dim ", 4),
        d_k=4,
    )
    student_curve: list[float | None] = []
    reference_curve: list[float | None] = []
    errors: list[str] = []
    for i, scale in enumerate(PLOT_SCALES):
        inputs = _plot_inputs(scale)
        ref = reference_stacked(*inputs)
        reference_curve.append(_largest(ref[0]))
        got, problem = pictures.student_array(results, 1 + i, ref.shape)
        student_curve.append(_largest(got[0]) if got is not None else None)
        if problem:
            errors.append(f"×{scale:g}: {problem}")
        elif student_curve[-1] is None:
            errors.append(f"×{scale:g}: your output has NaN or infinite entries.")
    vanishing = {
        "title": "The largest entry of dQ as the scores grow",
        "note": "Six queries and keys (d_k = 8), Q multiplied by each factor, so the scores "
        "are: the largest |dQ| of your function and of the reference. As the softmax "
        "saturates the gradient into Q vanishes, and a faithful gradient falls with the "
        "reference; without the 1/√d_k of the chain rule it sits √8 ≈ 2.8 times higher.",
        "scales": list(PLOT_SCALES),
        "student": student_curve,
        "reference": reference_curve,
        "tokens": [],
        "error": "; ".join(errors) or None,
    }
    return {"example": example, "saturation": None, "stability": None, "vanishing": vanishing}


KIND = Kind(
    name=NAME,
    reference=reference_stacked,
    reference_source=REFERENCE_SOURCE,
    wrong_implementations=WRONG_IMPLEMENTATIONS,
    diagnostic_probes=diagnostic_probes,
    arguments=ARGUMENTS,
    visible_examples=visible_examples,
    trial_case=trial_case,
    plot_calls=plot_calls,
    plots=plots_of,
    pictures=PICTURES,
    values_check="attention-backward-values",
    parameters=PARAMETERS,
    stability_call=stability_call,
    no_mutation_call=no_mutation_call,
    batch_copies=False,
    variant=attention_backward_variant,
    rules=_rules,
)
