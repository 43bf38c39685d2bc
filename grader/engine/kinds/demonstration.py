"""The question's ten-minute demonstration: ``scaling_demo(d_k, rng_seed, n=16)``. No Django.

The student draws Q then K, each (n, d_k), from ``np.random.default_rng(rng_seed)`` and returns
four numbers: the largest entry of Q Kᵀ, the largest of Q Kᵀ / √d_k, and the largest softmax
weight of row 0 without and with the division. The arguments are whole numbers and the output is
those four values (numpy sees a returned tuple as an array of shape (4,)), so the common machinery
compares it like any other output. What is particular to this kind (see ``kinds.attention``
for the layout): its catalogue, whose bodies are in ``demonstration_mistakes``; diagnostic
inputs at several head sizes, seeds and numbers of tokens, and at a head size so large that
an exponential without the max subtracted overflows; and the saturation picture, the student's
scaled top weight across head sizes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from grader.engine import pictures, reference
from grader.engine.executors.base import Arg, Call, CallResult
from grader.engine.inputs import DEMO_LARGE_D_K, DEMO_LARGE_N, DEMO_OVERFLOW_SEEDS, demo_call
from grader.engine.kinds.base import (
    LARGE,
    PLAIN,
    DiagnosticProbe,
    Kind,
    WrongImplementation,
    catalogue_of,
    probe,
)
from grader.engine.kinds.demonstration_mistakes import (
    demo_divides_by_d,
    demo_divides_by_half_d,
    demo_divides_by_root_n,
    demo_k_before_q,
    demo_last_row,
    demo_legacy_seed,
    demo_never_divides,
    demo_rounded,
    demo_row_0_scores,
    demo_softmax_axis_0,
    demo_softmax_whole_matrix,
    demo_top_weight_any_row,
    demo_transposed_draws,
    demo_two_generators,
    demo_uniform_draws,
    demo_unstable_softmax,
    demo_weights_never_divided,
)
from grader.engine.trial_args import (
    ROLE_INT,
    ArgSpec,
    TrialCase,
    custom_case,
    int_value,
)

NAME = reference.KIND_DEMONSTRATION

REFERENCE_SOURCE = '''import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    """The division by sqrt(d_k), shown on random scores.

    Q then K, each (n, d_k), from np.random.default_rng(rng_seed). Returns the largest raw score,
    the largest scaled score, and the largest softmax weight of row 0 without and with the
    division.
    """
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)

    def top_weight(row):
        e = np.exp(row - row.max())  # the max subtracted: no overflow at any d_k
        return (e / e.sum()).max()

    return raw.max(), scaled.max(), top_weight(raw[0]), top_weight(scaled[0])
'''

DRAWS = "demo-draws"
WRONG_ROW = "demo-wrong-row"

_LARGE = frozenset({LARGE})


_wrong = catalogue_of(NAME)


WRONG_IMPLEMENTATIONS: tuple[WrongImplementation, ...] = (
    _wrong("scale-by-d", demo_divides_by_d),
    _wrong("scale-by-d", demo_divides_by_half_d),
    _wrong("wrong-dimension", demo_divides_by_root_n),
    _wrong("missing-scale", demo_never_divides),
    _wrong("missing-scale", demo_weights_never_divided),
    # The contract fixes the generator and the order of the draws; the maxima of the whole
    # score matrix do not depend on the order (K first transposes it), row 0's weights do.
    _wrong(DRAWS, demo_k_before_q),
    _wrong(DRAWS, demo_legacy_seed),
    _wrong(DRAWS, demo_uniform_draws),
    _wrong(DRAWS, demo_two_generators),
    _wrong(DRAWS, demo_transposed_draws),
    _wrong("softmax-wrong-axis", demo_softmax_axis_0),
    _wrong("softmax-wrong-axis", demo_softmax_whole_matrix),
    _wrong(WRONG_ROW, demo_last_row),
    _wrong(WRONG_ROW, demo_top_weight_any_row),
    _wrong(WRONG_ROW, demo_row_0_scores),
    # Right until a raw score passes ~709: only the largest head sizes show it.
    _wrong("unstable-softmax", demo_unstable_softmax, _LARGE),
    _wrong("rounded-output", demo_rounded),
)


# --- diagnostic inputs -------------------------------------------------------------------------

# (d_k, seed, n) of the plain inputs; n None: the default, 16.
PLAIN_CASES: tuple[tuple[int, int, int | None], ...] = (
    (64, 0, None),
    (4, 1, None),
    (256, 2, 8),
    (16, 3, 5),
    (1024, 4, None),
    # Many keys of a tiny head: top weights near 0.1, which no grid of rounding fits by chance
    # (outputs of tens and hundreds alone would fit one of 1e-6 within its relative tolerance).
    (1, 5, 40),
    (2, 6, 64),
    (1, 7, 50),
)
LARGE_D_K, LARGE_N, OVERFLOW_SEEDS = DEMO_LARGE_D_K, DEMO_LARGE_N, DEMO_OVERFLOW_SEEDS
# The common stability check's head sizes stop here (two (4, d_k) draws of 32 MB each).
MAX_STABILITY_D_K = 2**20


def diagnostic_probes(rng: np.random.Generator) -> list[DiagnosticProbe]:
    """Fixed head sizes and seeds (the contract is deterministic, so ``rng`` is not needed)
    and two overflowing ones."""
    probes = [probe(demo_call(*case), PLAIN) for case in PLAIN_CASES]
    for seed in OVERFLOW_SEEDS[:2]:
        probes.append(probe(demo_call(LARGE_D_K, seed, LARGE_N), LARGE))
    return probes


# --- the common checks' inputs (checks.common) -------------------------------------------------

PARAMETERS = ("d_k", "rng_seed", "n")


def stability_call(rng: np.random.Generator, size: float, dtype: type) -> tuple[Call, str]:
    # The arguments are whole numbers, so the dtype cannot be chosen; the head size can: raw
    # scores have standard deviation √d_k, their largest of 16 about 2 √d_k. Past the cap the
    # draws would not fit the sandbox's memory, and the message says what was run instead.
    d_k = int(min(max((size / 2.0) ** 2, 1.0), MAX_STABILITY_D_K))
    seed = int(rng.integers(0, 10_000))
    top = 2.0 * np.sqrt(d_k)
    what = (
        f"d_k = {d_k}, rng_seed = {seed}, n = {LARGE_N} (scores of magnitude about {size:g} "
        f"asked; the raw scores reach about {top:g})"
    )
    return demo_call(d_k, seed, LARGE_N), what


def no_mutation_call(rng: np.random.Generator) -> tuple[Call, str]:
    return Call(args=(64, int(rng.integers(0, 1000))), return_inputs=True), "d_k = 64"


# --- trials: the visible examples and a custom input ------------------------------------------

MAX_TRIAL_D_K = 4096
MAX_TRIAL_N = 64
MAX_TRIAL_SEED = 2**31 - 1

# Not named seed: the Run form has a seed field of its own (for random arrays).
ARGUMENTS: tuple[ArgSpec, ...] = (
    ArgSpec("d_k", ROLE_INT, f"the head size, 1 to {MAX_TRIAL_D_K}", 1, MAX_TRIAL_D_K),
    ArgSpec("rng_seed", ROLE_INT, "the seed argument of default_rng", 0, MAX_TRIAL_SEED),
    ArgSpec("n", ROLE_INT, "optional: tokens, default 16", 1, MAX_TRIAL_N, optional=True),
)


def visible_examples() -> list[TrialCase]:
    return [
        TrialCase(
            "worked-example",
            "The question's head size, d_k = 64",
            "Q and K of shape (16, 64) from default_rng(0). The reference returns about "
            "(20.03, 2.50, 0.871, 0.199): raw scores in the tens, a top weight near one "
            "without the division.",
            ("d_k", "rng_seed"),
            (64, 0),
        ),
        TrialCase(
            "d-k-4",
            "A small head, d_k = 4",
            "Q and K of shape (16, 4) from default_rng(0): the division changes little.",
            ("d_k", "rng_seed"),
            (4, 0),
        ),
        TrialCase(
            "d-k-1024-n-8",
            "A wide head, d_k = 1024, and 8 tokens",
            "Q and K of shape (8, 1024) from default_rng(1): the raw scores grow like √d_k, "
            "the scaled ones do not.",
            ("d_k", "rng_seed", "n"),
            (1024, 1, 8),
        ),
    ]


def trial_case(spec: Mapping[str, Any], rng: np.random.Generator) -> TrialCase:
    d_arg, seed_arg, n_arg = ARGUMENTS
    d_k = int_value("d_k", spec["d_k"], d_arg.low, d_arg.high)
    seed = int_value("rng_seed", spec.get("rng_seed", 0), seed_arg.low, seed_arg.high)
    named: list[tuple[str, Arg]] = [("d_k", d_k), ("rng_seed", seed)]
    if spec.get("n") is not None:
        named.append(("n", int_value("n", spec["n"], n_arg.low, n_arg.high)))
    return custom_case(named)


# --- pictures: the scaled top weight across head sizes -----------------------------------------

# The head sizes of the picture, and the draws averaged at each (one row 0 per draw).
SWEEP_DK = (4, 16, 64, 256, 1024, 4096)
SWEEP_DRAWS = 8
SWEEP_KEYS = 16  # the default n
PICTURES = frozenset({"missing-scale", "wrong-dimension"})


def _sweep_seed(j: int) -> int:
    return pictures.PLOT_SEED % MAX_TRIAL_SEED + j


def plot_calls() -> tuple[Call, ...]:
    """Each head size of the sweep with SWEEP_DRAWS seeds of the pictures' own, default n."""
    return tuple(demo_call(d_k, _sweep_seed(j)) for d_k in SWEEP_DK for j in range(SWEEP_DRAWS))


def plots_of(results: Sequence[CallResult]) -> dict[str, Any]:
    """The saturation picture: at each head size, the mean over the draws of the largest scaled
    weight of row 0 (the fourth number), the student's beside the reference's."""
    student_curve: list[float | None] = []
    reference_curve: list[float | None] = []
    errors: list[str] = []
    for i, d_k in enumerate(SWEEP_DK):
        refs, tops = [], []
        for j in range(SWEEP_DRAWS):
            refs.append(reference.scaling_demonstration(d_k, _sweep_seed(j))[3])
            out, err = pictures.student_array(results, i * SWEEP_DRAWS + j, (4,))
            if err:
                errors.append(f"d_k = {d_k}: {err}")
                break
            tops.append(out[3] if out is not None else np.nan)
        reference_curve.append(pictures.num(float(np.mean(refs))))
        mean = float(np.mean(tops)) if len(tops) == SWEEP_DRAWS else float("nan")
        student_curve.append(pictures.num(mean))
        if not err and student_curve[-1] is None:
            errors.append(f"d_k = {d_k}: your numbers have NaN or infinite entries.")
    saturation = {
        "label": "d_k",
        "d_k": list(SWEEP_DK),
        "student": student_curve,
        "reference": reference_curve,
        "uniform": pictures.num(1 / SWEEP_KEYS),
        "queries": SWEEP_DRAWS,
        "keys": SWEEP_KEYS,
        "row": None,
        "error": "; ".join(errors) or None,
    }
    return {"example": None, "saturation": saturation}


KIND = Kind(
    name=NAME,
    reference=reference.scaling_demonstration,
    reference_source=REFERENCE_SOURCE,
    wrong_implementations=WRONG_IMPLEMENTATIONS,
    diagnostic_probes=diagnostic_probes,
    arguments=ARGUMENTS,
    visible_examples=visible_examples,
    trial_case=trial_case,
    plot_calls=plot_calls,
    plots=plots_of,
    pictures=PICTURES,
    values_check="demo-values",
    parameters=PARAMETERS,
    stability_call=stability_call,
    no_mutation_call=no_mutation_call,
    batch_copies=False,
)
