"""Checks of the ten-minute demonstration: ``scaling_demo(d_k, rng_seed, n=16)``.

``demo-values`` holds the four numbers to the reference's for given draws (the contract fixes
the generator and the order of the draws); ``demo-overflow`` does at a head size where an
unguarded exp() overflows; ``demo-trend`` reads the demonstration's point off the student's own
numbers across head sizes: the raw maximum grows like √d_k, the scaled one
stays of order one, the top weight without the division approaches 1 and with it does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from grader.engine import messages, reference
from grader.engine.checks.base import (
    Check,
    Outcome,
    Param,
    Probe,
    and_list,
    compare_with_reference,
    judge_against_reference,
    output_problem,
)
from grader.engine.inputs import DEMO_LARGE_D_K, DEMO_LARGE_N, DEMO_OVERFLOW_SEEDS, demo_call

DEMONSTRATION = frozenset({reference.KIND_DEMONSTRATION})

# Every correct formula agrees with the reference to about 1e-15 (the same draws, the same
# products in another order); float32 draws or rounded values are far outside.
RTOL = 1e-6
ATOL = 1e-9


def _what(d_k: int, seed: int, n: int | None) -> str:
    return f"d_k = {d_k}, rng_seed = {seed}" + ("" if n is None else f", n = {n}")


class DemoValues(Check):
    name = "demo-values"
    label_template = "The four numbers for given draws"
    description = (
        "d_k of 1, 4, 64, 512 and 2048 with several seeds, the default n and n = 3 and 40, vs "
        "the reference on the same draws (Q then K from np.random.default_rng(seed))."
    )
    kinds = DEMONSTRATION
    params = (
        Param("rtol", float, RTOL, "Relative tolerance against the reference.", 0.0, 0.1),
        Param("atol", float, ATOL, "Absolute tolerance against the reference.", 0.0, 0.1),
    )

    CASES: tuple[tuple[int, int, int | None], ...] = (
        (64, 7, None),
        (1, 11, None),
        (4, 12, 3),
        (512, 13, None),
        (2048, 14, 40),
        (64, 15, 2),
    )

    def prepare(self, params, rng, kind) -> list[Probe]:
        # Fixed cases, the stored seed added to each: every grade checks other draws.
        offset = int(rng.integers(0, 10_000))
        return [
            Probe(demo_call(d_k, seed + offset, n), _what(d_k, seed + offset, n))
            for d_k, seed, n in self.CASES
        ]

    def judge(self, params, probes, results, kind) -> Outcome:
        return judge_against_reference(kind, probes, results, params)


class DemoOverflow(Check):
    name = "demo-overflow"
    label_template = "A head size where exp() overflows"
    description = (
        "d_k = 262144 and n = 4 with the seeds whose raw scores of row 0 pass 709, where "
        "np.exp is infinite: the four numbers must be finite and match the reference."
    )
    kinds = DEMONSTRATION
    params = (
        Param("rtol", float, RTOL, "Relative tolerance against the reference.", 0.0, 0.1),
        Param("atol", float, ATOL, "Absolute tolerance against the reference.", 0.0, 0.1),
    )

    def prepare(self, params, rng, kind) -> list[Probe]:
        return [
            Probe(
                demo_call(DEMO_LARGE_D_K, seed, DEMO_LARGE_N),
                _what(DEMO_LARGE_D_K, seed, DEMO_LARGE_N),
            )
            for seed in DEMO_OVERFLOW_SEEDS
        ]

    def judge(self, params, probes, results, kind) -> Outcome:
        return judge_against_reference(kind, probes, results, params)


class DemoTrend(Check):
    name = "demo-trend"
    description = (
        "Over `seeds` at each of `d_ks` (n = 16), from the student's own numbers: the mean "
        "largest raw score over √d_k and the mean largest scaled score both lie in `band` at "
        "every d_k (the raw spread grows like √d_k, the scaled one stays of order one); the "
        "median top weight without the division reaches `saturated` at the largest d_k (a "
        "median: one draw in a dozen has two raw scores close at the top); with it, the mean "
        "stays below `spread` at every d_k."
    )
    kinds = DEMONSTRATION
    params = (
        Param(
            "d_ks",
            list,
            [4, 16, 64, 256, 1024, 4096],
            "Head sizes.",
            1,
            16384,
            item_type=int,
        ),
        Param("seeds", int, 8, "Draws at each head size.", 1, 50),
        Param(
            "band", list, [1.5, 5.0], "Bounds of a maximum over √d_k.", 0.0, 100.0, item_type=float
        ),
        Param("saturated", float, 0.95, "Median unscaled top weight, largest d_k.", 0.5, 1.0),
        Param("spread", float, 0.75, "Bound of the scaled top weight.", 0.0, 1.0),
    )

    def label_for(self, params: Mapping[str, Any]) -> str:
        d_ks = and_list([str(int(d)) for d in params["d_ks"]])
        return messages.DEMO_TREND_LABEL.format(d_ks=d_ks)

    def prepare(self, params, rng, kind) -> list[Probe]:
        first = int(rng.integers(0, 10_000))
        probes = []
        for d_k in params["d_ks"]:
            for i in range(params["seeds"]):
                seed = first + i
                probes.append(Probe(demo_call(int(d_k), seed), _what(int(d_k), seed, None)))
        return probes

    def judge(self, params, probes, results, kind) -> Outcome:
        outs = []
        for probe, result in zip(probes, results, strict=True):
            # Each number must be right first: a trend of wrong numbers shows nothing.
            problem = compare_with_reference(kind, probe, result, rtol=RTOL, atol=ATOL)
            if problem is None:
                outs.append(np.asarray(result.output, dtype=np.float64))
                continue
            problem = output_problem(probe, result) or problem
            return Outcome(False, problem)
        return trend_outcome(params, np.stack(outs))


def trend_outcome(params: Mapping[str, Any], outs: np.ndarray) -> Outcome:
    """Judge the means per head size of ``outs`` (one row of four numbers per call, d_k by
    d_k, ``params["seeds"]`` calls each)."""
    d_ks = [int(d) for d in params["d_ks"]]
    per_size = outs.reshape(len(d_ks), params["seeds"], 4)
    means = per_size.mean(axis=1)
    low, high = (float(b) for b in params["band"])
    for d_k, (raw, scaled, _top_raw, top_scaled) in zip(d_ks, means, strict=True):
        if not low <= raw / np.sqrt(d_k) <= high:
            return Outcome(
                False, messages.DEMO_RAW_SPREAD.format(d_k=d_k, raw=raw, ratio=raw / np.sqrt(d_k))
            )
        if not low <= scaled <= high:
            return Outcome(False, messages.DEMO_SCALED_SPREAD.format(d_k=d_k, scaled=scaled))
        if top_scaled > params["spread"]:
            return Outcome(False, messages.DEMO_SCALED_PEAKED.format(d_k=d_k, top=top_scaled))
    top = float(np.median(per_size[-1, :, 2]))
    if top < params["saturated"]:
        return Outcome(False, messages.DEMO_NOT_SATURATED.format(d_k=d_ks[-1], top=top))
    return Outcome(True, messages.PASSED)
