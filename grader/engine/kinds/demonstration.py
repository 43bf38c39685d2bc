"""The question's ten-minute demonstration: ``scaling_demo(d_k, seed, n=16)``. No Django imports.

The student draws Q then K, each (n, d_k), from ``np.random.default_rng(seed)`` and returns four
numbers: the largest entry of Q Kᵀ, the largest of Q Kᵀ / √d_k, and the largest softmax weight of
row 0 without and with the division. The arguments are whole numbers and the output is those
four values (numpy sees a returned tuple as an array of shape (4,)), so the common machinery
compares it like any other output. What is particular to this kind (see ``kinds.attention``
for the layout): its catalogue, whose bodies are in ``demonstration_mistakes``; diagnostic
inputs at several head sizes, seeds and numbers of tokens, and at a head size so large that
an exponential without the max subtracted overflows; and no pictures (the trend across d_k is
one of its checks, ``demo-trend``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from grader.engine import reference
from grader.engine.executors.base import Arg, Call, CallResult
from grader.engine.inputs import demo_call
from grader.engine.kinds.base import LARGE, PLAIN, DiagnosticProbe, Kind, WrongImplementation, probe
from grader.engine.kinds.demonstration_mistakes import (
    demo_divides_by_d,
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
    demo_uniform_draws,
    demo_unstable_softmax,
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


def scaling_demo(d_k, seed, n=16):
    """The division by sqrt(d_k), shown on random scores.

    Q then K, each (n, d_k), from np.random.default_rng(seed). Returns the largest raw score,
    the largest scaled score, and the largest softmax weight of row 0 without and with the
    division.
    """
    rng = np.random.default_rng(seed)
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

_PLAIN = frozenset({PLAIN})
_LARGE = frozenset({LARGE})


def _wrong(code: str, func: object, tags: frozenset[str] = _PLAIN) -> WrongImplementation:
    return WrongImplementation(code, NAME, func, tags)  # type: ignore[arg-type]


WRONG_IMPLEMENTATIONS: tuple[WrongImplementation, ...] = (
    _wrong("scale-by-d", demo_divides_by_d),
    _wrong("wrong-dimension", demo_divides_by_root_n),
    _wrong("missing-scale", demo_never_divides),
    # The contract fixes the generator and the order of the draws; the maxima of the whole
    # score matrix do not depend on the order (K first transposes it), row 0's weights do.
    _wrong(DRAWS, demo_k_before_q),
    _wrong(DRAWS, demo_legacy_seed),
    _wrong(DRAWS, demo_uniform_draws),
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
)
# A head size whose raw scores reach ~1e3 (std √d_k = 512): with these seeds and n, a raw score
# of row 0 passes 709, where exp() overflows. Four tokens keep the draws small.
LARGE_D_K = 2**18
LARGE_N = 4
OVERFLOW_SEEDS = (4, 6, 8)


def diagnostic_probes(rng: np.random.Generator) -> list[DiagnosticProbe]:
    """Fixed head sizes and seeds (the contract is deterministic, so ``rng`` is not needed)
    and two overflowing ones."""
    probes = [probe(demo_call(*case), PLAIN) for case in PLAIN_CASES]
    for seed in OVERFLOW_SEEDS[:2]:
        probes.append(probe(demo_call(LARGE_D_K, seed, LARGE_N), LARGE))
    return probes


# --- the common checks' inputs (checks.common) -------------------------------------------------

PARAMETERS = ("d_k", "seed", "n")


def stability_call(rng: np.random.Generator, size: float, dtype: type) -> tuple[Call, str]:
    # The arguments are whole numbers: neither the magnitude nor the dtype can be chosen; the
    # head size is the one whose raw scores reach about 1e3 whatever is asked.
    seed = int(rng.choice(OVERFLOW_SEEDS))
    what = f"d_k = {LARGE_D_K}, seed = {seed}, n = {LARGE_N} (raw scores near 1e3)"
    return demo_call(LARGE_D_K, seed, LARGE_N), what


def no_mutation_call(rng: np.random.Generator) -> tuple[Call, str]:
    return Call(args=(64, int(rng.integers(0, 1000))), return_inputs=True), "d_k = 64"


# --- trials: the visible examples and a custom input ------------------------------------------

MAX_TRIAL_D_K = 4096
MAX_TRIAL_N = 64
MAX_TRIAL_SEED = 2**31 - 1

# Named rng_seed on the page: the Run form has a seed field of its own (for random arrays).
ARGUMENTS: tuple[ArgSpec, ...] = (
    ArgSpec("d_k", ROLE_INT, f"the head size, 1 to {MAX_TRIAL_D_K}", 1, MAX_TRIAL_D_K),
    ArgSpec("rng_seed", ROLE_INT, "the seed argument of default_rng", 0, MAX_TRIAL_SEED),
    ArgSpec("n", ROLE_INT, "optional: tokens, default 16", 1, MAX_TRIAL_N, optional=True),
)


def visible_examples() -> list[TrialCase]:
    return [
        TrialCase(
            "d-k-64",
            "The question's head size, d_k = 64",
            "Q and K of shape (16, 64) from default_rng(0). The reference returns about "
            "(20.03, 2.50, 0.871, 0.199): raw scores in the tens, a top weight near one "
            "without the division.",
            ("d_k", "seed"),
            (64, 0),
        ),
        TrialCase(
            "d-k-4",
            "A small head, d_k = 4",
            "Q and K of shape (16, 4) from default_rng(0): the division changes little.",
            ("d_k", "seed"),
            (4, 0),
        ),
        TrialCase(
            "d-k-1024-n-8",
            "A wide head, d_k = 1024, and 8 tokens",
            "Q and K of shape (8, 1024) from default_rng(1): the raw scores grow like √d_k, "
            "the scaled ones do not.",
            ("d_k", "seed", "n"),
            (1024, 1, 8),
        ),
    ]


def trial_case(spec: Mapping[str, Any], rng: np.random.Generator) -> TrialCase:
    d_arg, seed_arg, n_arg = ARGUMENTS
    d_k = int_value("d_k", spec["d_k"], d_arg.low, d_arg.high)
    seed = int_value("rng_seed", spec.get("rng_seed", 0), seed_arg.low, seed_arg.high)
    named: list[tuple[str, Arg]] = [("d_k", d_k), ("seed", seed)]
    if spec.get("n") is not None:
        named.append(("n", int_value("n", spec["n"], n_arg.low, n_arg.high)))
    return custom_case(named)


# --- pictures: none (the trend is a check's, and its message quotes the numbers) -------------


def plot_calls() -> tuple[Call, ...]:
    return ()


def plots_of(results: Sequence[CallResult]) -> dict[str, Any]:
    return {"example": None, "saturation": None}


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
    pictures=frozenset(),
    values_check="demo-values",
    parameters=PARAMETERS,
    stability_call=stability_call,
    no_mutation_call=no_mutation_call,
    batch_copies=False,
)
