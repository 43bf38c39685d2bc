"""Checks of the softmax backward exercise: ``softmax_backward(p, g)``.

``backward-values`` and ``backward-batch-axes`` compare with the reference at float64
tolerances; ``backward-vanishing`` holds the gradient of a saturated softmax to the reference's
tiny values, relatively, so a p clipped away from 0, an epsilon or a flush to zero fails it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from grader.engine import messages, reference
from grader.engine.checks.base import (
    ATOL64_PARAM,
    RTOL64_PARAM,
    Check,
    Outcome,
    Param,
    Probe,
    and_list,
    finite_problem,
    judge_against_reference,
    output_problem,
    probe_expected,
    shape_problem,
    shape_text,
)
from grader.engine.inputs import softmax_backward_call, softmax_backward_inputs

BACKWARD = frozenset({reference.KIND_SOFTMAX_BACKWARD})


class BackwardValues(Check):
    name = "backward-values"
    label_template = "Values and shape of the gradient"
    description = (
        "p = softmax of scores of std `scale` and a unit-variance g, 1-D, 2-D (square and not) "
        "and 3-D, vs the reference p * (g - sum(g * p, axis=-1, keepdims=True))."
    )
    kinds = BACKWARD
    params = (
        Param("scale", float, 3.0, "Standard deviation of the scores behind p.", 0.0, 100.0),
        RTOL64_PARAM,
        ATOL64_PARAM,
    )

    SHAPES = ((6,), (3, 7), (5, 5), (2, 3, 4))

    def prepare(self, params, rng, kind) -> list[Probe]:
        probes = []
        for shape in self.SHAPES:
            p, g = softmax_backward_inputs(rng, shape, params["scale"])
            probes.append(
                Probe(softmax_backward_call(p, g), f"p and g of shape {shape_text(shape)}")
            )
        return probes

    def judge(self, params, probes, results, kind) -> Outcome:
        return judge_against_reference(kind, probes, results, params)


class BackwardBatchAxes(Check):
    name = "backward-batch-axes"
    label_template = "Leading batch axes"
    description = (
        "p and g with one, two and three leading batch axes (attention's (batch, heads, n, m) "
        "weights among them): the sum runs along the last axis only."
    )
    kinds = BACKWARD
    params = (RTOL64_PARAM, ATOL64_PARAM)

    SHAPES = ((4, 3, 6), (2, 4, 5, 5), (2, 2, 3, 4), (1, 1, 8))

    def prepare(self, params, rng, kind) -> list[Probe]:
        probes = []
        for shape in self.SHAPES:
            p, g = softmax_backward_inputs(rng, shape)
            probes.append(
                Probe(softmax_backward_call(p, g), f"p and g of shape {shape_text(shape)}")
            )
        return probes

    def judge(self, params, probes, results, kind) -> Outcome:
        return judge_against_reference(kind, probes, results, params)


def vanishing_problem(
    probe: Probe, out: np.ndarray, expected: np.ndarray, *, rtol: float, atol: float
) -> str | None:
    """Each entry within ``rtol`` of the reference's, down to ``atol``; a row's largest weight
    within the sum of the others' magnitudes (its exact value is minus their sum, which
    float64 cannot resolve next to p ≈ 1) plus float64's resolution of g·p."""
    p = np.asarray(probe.call.args[0], dtype=np.float64)
    g = np.asarray(probe.call.args[1], dtype=np.float64)
    out = out.astype(np.float64)
    top = p == np.max(p, axis=-1, keepdims=True)
    others = np.sum(np.abs(np.where(top, 0.0, expected)), axis=-1, keepdims=True)
    resolution = 8 * np.finfo(np.float64).eps * np.sum(np.abs(g * p), axis=-1, keepdims=True)
    allowed = rtol * np.abs(expected) + atol + np.where(top, others + resolution, 0.0)
    diff = np.abs(out - expected)
    bad = diff > allowed
    if not np.any(bad):
        return None
    i = np.unravel_index(int(np.argmax(np.where(bad, diff / allowed, -1.0))), bad.shape)
    shown_expected, shown_got = distinct_figures(float(expected[i]), float(out[i]))
    return messages.BACKWARD_VANISHING.format(
        what=probe.what, expected=shown_expected, got=shown_got, rtol=rtol
    )


def distinct_figures(a: float, b: float, *, least: int = 3, most: int = 17) -> tuple[str, str]:
    """a and b with the fewest significant figures (at least ``least``) that tell them apart:
    a float32 rounding differs from float64 only in the eighth figure, and a message saying
    that -6.42e-11 came back as -6.42e-11 reads as a contradiction."""
    for digits in range(least, most + 1):
        shown = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if shown[0] != shown[1]:
            return shown
    return shown


class BackwardVanishing(Check):
    name = "backward-vanishing"
    description = (
        "p = softmax of scores of std `scales` (a saturated softmax: weights down to 1e-30 "
        "and below) and a unit-variance g. Every entry of the gradient must be within `rtol` "
        "of the reference's, relatively, down to `atol`: the vanishing gradient must come "
        "back as it is, not clipped, floored by an epsilon or set to 0. A row's largest "
        "weight may differ by the sum of the others' entries (float64 cannot resolve it)."
    )
    kinds = BACKWARD
    params = (
        Param(
            "scales",
            list,
            [16.0, 32.0, 64.0],
            "Standard deviations of the scores behind p.",
            1.0,
            1e3,
            item_type=float,
        ),
        Param("rtol", float, 1e-6, "Relative tolerance of each entry.", 0.0, 0.1),
        Param("atol", float, 1e-300, "Absolute floor: smaller differences pass.", 0.0, 1e-20),
    )

    def label_for(self, params: Mapping[str, Any]) -> str:
        scales = and_list([f"{float(s):g}" for s in params["scales"]])
        return messages.BACKWARD_VANISHING_LABEL.format(scales=scales)

    SHAPE = (6, 8)

    def prepare(self, params, rng, kind) -> list[Probe]:
        probes = []
        for scale in params["scales"]:
            p, g = softmax_backward_inputs(rng, self.SHAPE, float(scale))
            what = f"p of shape {shape_text(self.SHAPE)} from scores of std {float(scale):g}"
            probes.append(Probe(softmax_backward_call(p, g), what))
        return probes

    def judge(self, params, probes, results, kind) -> Outcome:
        for probe, result in zip(probes, results, strict=True):
            problem = output_problem(probe, result)
            if problem is None:
                assert result is not None and result.output is not None
                expected = probe_expected(kind, probe)
                problem = (
                    shape_problem(probe, result.output, expected.shape)
                    or finite_problem(probe, result.output)
                    or vanishing_problem(
                        probe, result.output, expected, rtol=params["rtol"], atol=params["atol"]
                    )
                )
            if problem:
                return Outcome(False, problem)
        return Outcome(True, messages.PASSED)
