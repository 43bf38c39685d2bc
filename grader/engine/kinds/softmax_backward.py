"""The softmax's backward pass: ``softmax_backward(p, g)``. No Django imports.

Given the softmax's output ``p`` (any leading batch axes, normalised along the last one) and the
upstream gradient ``g`` of the same shape, the gradient with respect to the scores is the
vector-Jacobian product p * (g - sum(g * p, axis=-1, keepdims=True)). What is particular to this
kind (see ``kinds.attention`` for the layout): its catalogue, whose bodies are in
``softmax_backward_mistakes``; diagnostic inputs of one, two and three dimensions (no batched
copies, as for the softmax); a rule of its own for a gradient that does not vanish where the
reference's does; and the pictures, the explainer's toy row at growing score scales.
"""

# ruff: noqa: RUF001, RUF003 - the pictures' text uses ×, −, – and … on purpose

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from grader.engine import pictures, reference
from grader.engine.executors.base import Arg, Call, CallResult
from grader.engine.inputs import (
    WORKED_K,
    WORKED_Q,
    saturated_scores,
    softmax_backward_call,
    softmax_backward_inputs,
    unit,
)
from grader.engine.kinds.base import (
    BATCH,
    LARGE,
    PLAIN,
    DiagnosticProbe,
    Kind,
    WrongImplementation,
    catalogue_of,
    lost_only_where_saturated,
    probe,
)
from grader.engine.kinds.softmax_backward_mistakes import (
    backward_clips_p,
    backward_diagonal_only,
    backward_flushes_tiny,
    backward_in_place,
    backward_jacobian_transposed,
    backward_missing_keepdims,
    backward_returns_jacobian,
    backward_rounded,
    backward_sign_flipped,
    backward_softmax_again,
    backward_sum_axis_0,
    backward_sum_axis_1,
    backward_sum_whole,
    backward_two_dims_only,
)
from grader.engine.trial_args import (
    MSG_G_SHAPE,
    MSG_NOT_PROBABILITIES,
    ROLE_ARRAY,
    ArgSpec,
    TrialCase,
    TrialInputError,
    array_arg,
    custom_case,
    shape_text,
)

NAME = reference.KIND_SOFTMAX_BACKWARD

REFERENCE_SOURCE = '''import numpy as np


def softmax_backward(p, g):
    """Gradient of softmax (last axis) with respect to its scores, from its output p.

    Each row's Jacobian is J = diag(p) - p p^T (symmetric), so J^T g = p * (g - p . g).
    """
    return p * (g - np.sum(g * p, axis=-1, keepdims=True))
'''

VANISHING_HIDDEN = "backward-vanishing-hidden"

_LARGE = frozenset({LARGE})
_BATCH = frozenset({BATCH})


_wrong = catalogue_of(NAME)


WRONG_IMPLEMENTATIONS: tuple[WrongImplementation, ...] = (
    _wrong("backward-diagonal-only", backward_diagonal_only),
    _wrong("backward-sign-flipped", backward_sign_flipped),
    _wrong("backward-wrong-axis", backward_sum_axis_0),
    _wrong("backward-wrong-axis", backward_sum_axis_1),
    _wrong("backward-wrong-axis", backward_sum_whole),
    _wrong("backward-wrong-axis", backward_missing_keepdims),
    # The Jacobian is symmetric, so J^T g = J g: the order of the product is never the mistake.
    # Transposing a stacked (..., n, n) Jacobian with .T is: it pairs one row's Jacobian with
    # another row's g (square inputs) or cannot multiply at all (any other shape).
    _wrong("backward-jacobian-batch", backward_jacobian_transposed),
    _wrong("backward-softmax-again", backward_softmax_again),
    # Right wherever the gradient is not tiny: the kind's rule names them (see _rules).
    _wrong(VANISHING_HIDDEN, backward_clips_p, _LARGE),
    _wrong(VANISHING_HIDDEN, backward_flushes_tiny, _LARGE),
    _wrong("rounded-output", backward_rounded),
    _wrong("mutates-input", backward_in_place),
    _wrong("wrong-shape", backward_returns_jacobian),
    _wrong("batch-fixed-ndim", backward_two_dims_only, _BATCH),
)


# --- diagnostic inputs -------------------------------------------------------------------------

# Score shapes of the plain inputs: a vector, a matrix, a square matrix (where a sum without
# keepdims and a transposed stack of Jacobians run and give wrong values) and a 3-D stack.
_PLAIN_SHAPES = ((7,), (4, 6), (5, 5), (3, 4, 5), (4, 4))
# Saturated rows: one score raised by this much, so the other weights are about e^-60 = 1e-26.
SATURATION_BUMP = 60.0


def diagnostic_probes(rng: np.random.Generator) -> list[DiagnosticProbe]:
    """Inputs that tell the known misconceptions apart. The plain inputs have one, two and
    three dimensions (no batched copies: ``Kind.batch_copies`` is False); the large ones are
    saturated rows, with weights about 1e-26 and exactly 0."""
    probes = []
    for shape in _PLAIN_SHAPES:
        p, g = softmax_backward_inputs(rng, shape)
        probes.append(probe(softmax_backward_call(p, g, return_inputs=True), PLAIN))
    for shape in ((4, 6), (2, 3, 5)):
        p = reference.softmax(saturated_scores(rng, shape, SATURATION_BUMP))
        probes.append(probe(softmax_backward_call(p, unit(rng, shape)), LARGE))
    p = reference.softmax(unit(rng, (3, 6)) * 1e3)  # exactly one-hot: zeros and ones
    probes.append(probe(softmax_backward_call(p, unit(rng, (3, 6))), LARGE))
    return probes


# A tiny entry (not a row's largest weight) must agree with the reference to this relative
# error, down to this absolute floor: what float64 gives for every correct formula.
RULE_RTOL = 1e-3
TINY = 1e-12
FLOOR = 1e-300


def tiny_entries_differ(
    p: np.ndarray, student: np.ndarray, ref: np.ndarray, *, rtol: float, floor: float
) -> bool:
    """Does the student's gradient differ, relatively, where the reference's is tiny (below
    TINY) and ``p`` is not its row's largest weight? That entry's true value, minus the sum of
    the others, cannot be resolved next to p ≈ 1, so every formula rounds it differently."""
    top = p == np.max(p, axis=-1, keepdims=True)
    tiny = (np.abs(ref) < TINY) & ~top
    with np.errstate(invalid="ignore"):
        bad = np.abs(student - ref) > rtol * np.abs(ref) + floor
    return bool(np.any(bad & tiny))


def _rules(
    probes: Sequence[DiagnosticProbe],
    refs: Sequence[Any],
    students: Sequence[Any],
    codes: set[str],
) -> set[str]:
    """``backward-vanishing-hidden``: right on every plain input, finite and of the right shape
    on the saturated ones, where the tiny entries do not come back as computed (a p clipped
    away from 0, an epsilon, small values set to 0). Rounded outputs lose them for another
    reason, which ``rounded-output`` names."""
    if "rounded-output" in codes:
        return set()

    def lost(probe: DiagnosticProbe, student: np.ndarray, ref: np.ndarray) -> bool:
        p = np.asarray(probe.call.args[0], dtype=np.float64)
        return tiny_entries_differ(p, student, ref, rtol=RULE_RTOL, floor=FLOOR)

    return {VANISHING_HIDDEN} if lost_only_where_saturated(probes, refs, students, lost) else set()


# --- the common checks' inputs (checks.common) -------------------------------------------------

PARAMETERS = ("p", "g")


def stability_call(rng: np.random.Generator, size: float, dtype: type) -> tuple[Call, str]:
    # p from scores of std `size`: at 1e3, exactly 0 and 1 wherever two scores are ~745 apart.
    p = reference.softmax(unit(rng, (4, 9)) * size).astype(dtype)
    g = unit(rng, (4, 9)).astype(dtype)
    if dtype is np.float32:
        return softmax_backward_call(p, g), f"p from scores of magnitude about {size:g}"
    return softmax_backward_call(p, g), f"a saturated p (scores of magnitude about {size:g})"


def no_mutation_call(rng: np.random.Generator) -> tuple[Call, str]:
    p, g = softmax_backward_inputs(rng, (5, 7))
    return softmax_backward_call(p, g, return_inputs=True), "random p and g of shape (5, 7)"


# --- trials: the visible examples and a custom input ------------------------------------------

ARGUMENTS: tuple[ArgSpec, ...] = (
    ArgSpec("p", ROLE_ARRAY, "softmax output: rows sum to 1 (a shape gives softmax(random))"),
    ArgSpec("g", ROLE_ARRAY, "upstream gradient, the shape of p"),
)

# The worked example's scores after the division by sqrt(d_k) = 2 (the question page's step 2).
_WORKED_SCORES = (WORKED_Q @ WORKED_K.T) / 2.0
# The explainer's toy row: the last "the" of "The cat sat on the" against the five tokens, the
# two-decimal scores of its saturation figure (static/explorables/compute.mjs), which round to
# the printed 0.8, 1.7, 0.5, 0.1, 0.2 and give its numbers: 0.250, 0.027 and 5.4e-5.
TOY_SCORES = np.array([0.75, 1.74, 0.5, 0.06, 0.16])
TOY_TOKENS = ("The", "cat", "sat", "on", "the")


def visible_examples() -> list[TrialCase]:
    p = reference.softmax(_WORKED_SCORES)
    toy = np.stack([reference.softmax(TOY_SCORES * c) for c in (1.0, 4.0, 10.0)])
    return [
        TrialCase(
            "worked-example",
            "The worked example's weights, g picks key 1",
            "p is the softmax of the worked example's scaled scores (first row [0.506, 0.186, "
            "0.307]); g = [1, 0, 0] in every row, so each row of the answer is p₁ (δ₁ⱼ − pⱼ): "
            "how weight 1 moves when each score moves.",
            ("p", "g"),
            (p, np.tile([1.0, 0.0, 0.0], (3, 1))),
        ),
        TrialCase(
            "batched",
            "With a batch axis",
            "Two stacks of the same weights, shape (2, 3, 3), and a different g in each.",
            ("p", "g"),
            (
                np.stack([p, p]),
                np.stack([np.tile([1.0, 0.0, 0.0], (3, 1)), np.tile([0.0, -1.0, 0.5], (3, 1))]),
            ),
        ),
        TrialCase(
            "saturated",
            "The explainer's toy row at ×1, ×4 and ×10",
            "Scores [0.75, 1.74, 0.5, 0.06, 0.16] multiplied by 1, 4 and 10, then softmax: the "
            "sharper the weights, the smaller the gradient that gets back.",
            ("p", "g"),
            (toy, np.tile([1.0, -1.0, 0.5, 0.0, 0.25], (3, 1))),
        ),
    ]


PROBABILITY_ATOL = 1e-3  # a typed p such as [0.33, 0.33, 0.34] is accepted


def trial_case(spec: Mapping[str, Any], rng: np.random.Generator) -> TrialCase:
    p_arg, g_arg = ARGUMENTS
    if isinstance(spec["p"], dict):
        # A shape: random scores, and their softmax (the student reads the values shown).
        p = reference.softmax(array_arg(p_arg, spec["p"], rng))
    else:
        p = array_arg(p_arg, spec["p"], rng)
        sums_ok = np.allclose(p.sum(axis=-1), 1.0, atol=PROBABILITY_ATOL)
        if np.any(p < 0) or not sums_ok:
            raise TrialInputError(MSG_NOT_PROBABILITIES)
    g = array_arg(g_arg, spec["g"], rng)
    if g.shape != p.shape:
        raise TrialInputError(MSG_G_SHAPE.format(p=shape_text(p.shape), g=shape_text(g.shape)))
    named: list[tuple[str, Arg]] = [("p", p), ("g", g)]
    return custom_case(named)


# --- pictures: the gradient of the explainer's toy row as its scores grow ---------------------

# The score multipliers of the picture, on a log axis, from the explainer's ×1 to far past ×10.
PLOT_SCALES = (1.0, 2.0, 4.0, 10.0, 20.0, 40.0, 80.0)

PICTURES = frozenset({VANISHING_HIDDEN, "backward-diagonal-only", "backward-sign-flipped"})


def _plot_p() -> np.ndarray:
    return reference.softmax(_WORKED_SCORES)


def _plot_g() -> np.ndarray:
    return np.tile([1.0, -1.0, 0.5], (3, 1))


def plot_calls() -> tuple[Call, ...]:
    """The example, then each scale of the toy row with g = identity: row j of the output is
    the gradient when only weight j matters, so the output is the whole Jacobian."""
    n = TOY_SCORES.size
    calls = [Call(args=(_plot_p(), _plot_g()))]
    for scale in PLOT_SCALES:
        p = np.tile(reference.softmax(TOY_SCORES * scale), (n, 1))
        calls.append(Call(args=(p, np.eye(n))))
    return tuple(calls)


def _largest(a: np.ndarray | None) -> float | None:
    if a is None or not np.all(np.isfinite(a)):
        return None
    return float(np.max(np.abs(a)))


def _sci(x: float | None) -> float | None:
    # Four significant digits, whatever the size: the curve spans thirty orders of magnitude.
    return float(f"{x:.4g}") if x is not None else None


def plots_of(results: Sequence[CallResult]) -> dict[str, Any]:
    shape = _plot_p().shape
    example = pictures.example_dict(
        *_student(results, 0, shape),
        title="The gradient on the worked example's weights",
        note="p: the worked example's weights; g = [1, −1, 0.5] in every row. Each row of "
        "the gradient sums to 0.",
        rows=pictures.labels("row ", shape[0]),
        cols=pictures.labels("score ", shape[1]),
        d_k=None,
    )
    n = TOY_SCORES.size
    student_curve: list[float | None] = []
    reference_curve: list[float | None] = []
    errors: list[str] = []
    for i, scale in enumerate(PLOT_SCALES):
        toy = np.tile(reference.softmax(TOY_SCORES * scale), (n, 1))
        reference_curve.append(_sci(_largest(reference.softmax_backward(toy, np.eye(n)))))
        out, err = pictures.student_array(results, 1 + i, (n, n))
        student_curve.append(_sci(_largest(out)))
        if err:
            errors.append(f"×{scale:g}: {err}")
        elif student_curve[-1] is None:
            errors.append(f"×{scale:g}: your output has NaN or infinite entries.")
    vanishing = {
        "title": "The largest gradient entry as the scores grow",
        "note": "The explainer's toy row, scores [0.75, 1.74, 0.5, 0.06, 0.16] multiplied by each "
        "factor; your function called with g = each one-hot vector in turn (so its output is "
        "the whole Jacobian), and its largest entry in absolute value. A saturated softmax "
        "passes almost no gradient back: the reference falls by more than thirty orders of "
        "magnitude, and a faithful gradient falls with it.",
        "scales": list(PLOT_SCALES),
        "student": student_curve,
        "reference": reference_curve,
        "tokens": list(TOY_TOKENS),
        "error": "; ".join(errors) or None,
    }
    return {"example": example, "saturation": None, "stability": None, "vanishing": vanishing}


def _student(
    results: Sequence[CallResult], index: int, shape: tuple[int, ...]
) -> tuple[np.ndarray | None, np.ndarray, str | None]:
    out, err = pictures.student_array(results, index, shape)
    return out, reference.softmax_backward(_plot_p(), _plot_g()), err


KIND = Kind(
    name=NAME,
    reference=reference.softmax_backward,
    reference_source=REFERENCE_SOURCE,
    wrong_implementations=WRONG_IMPLEMENTATIONS,
    diagnostic_probes=diagnostic_probes,
    arguments=ARGUMENTS,
    visible_examples=visible_examples,
    trial_case=trial_case,
    plot_calls=plot_calls,
    plots=plots_of,
    pictures=PICTURES,
    values_check="backward-values",
    parameters=PARAMETERS,
    stability_call=stability_call,
    no_mutation_call=no_mutation_call,
    batch_copies=False,
    rules=_rules,
)
