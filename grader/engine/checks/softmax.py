"""Checks of the softmax exercise: ``softmax(x, axis=-1)``."""

from __future__ import annotations

from grader.engine import reference
from grader.engine.checks.base import (
    ATOL_PARAM,
    RTOL_PARAM,
    Check,
    Outcome,
    Param,
    Probe,
    judge_against_reference,
    shape_text,
)
from grader.engine.inputs import softmax_call, unit

SOFTMAX = frozenset({reference.KIND_SOFTMAX})


class SoftmaxValues(Check):
    name = "softmax-values"
    label_template = "Values and shape with the default axis"
    description = (
        "1-D, 2-D and 3-D inputs (entries of std `scale`), default axis, vs the reference."
    )
    kinds = SOFTMAX
    params = (
        Param("scale", float, 3.0, "Standard deviation of the inputs.", 0.0, 100.0),
        RTOL_PARAM,
        ATOL_PARAM,
    )

    SHAPES = ((5,), (3, 7), (2, 3, 4), (4, 4))

    def prepare(self, params, rng, kind) -> list[Probe]:
        return [
            Probe(
                softmax_call(unit(rng, shape) * params["scale"]), f"x of shape {shape_text(shape)}"
            )
            for shape in self.SHAPES
        ]

    def judge(self, params, probes, results, kind) -> Outcome:
        return judge_against_reference(kind, probes, results, params)


class SoftmaxAxis(Check):
    name = "softmax-axis"
    label_template = "The axis argument"
    description = "softmax(x, axis) along axis 0, 1 and a negative axis of 2-D and 3-D inputs."
    kinds = SOFTMAX
    params = (RTOL_PARAM, ATOL_PARAM)

    CASES = (((3, 7), 0), ((4, 5, 6), 0), ((4, 5, 6), 1), ((4, 5, 6), -2), ((5, 5), 0))

    def prepare(self, params, rng, kind) -> list[Probe]:
        return [
            Probe(
                softmax_call(unit(rng, shape) * 3.0, axis),
                f"x of shape {shape_text(shape)} with axis={axis}",
            )
            for shape, axis in self.CASES
        ]

    def judge(self, params, probes, results, kind) -> Outcome:
        return judge_against_reference(kind, probes, results, params)
