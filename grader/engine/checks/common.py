"""Checks that apply to more than one exercise kind: stability, normalisation, no mutation."""

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
    finite_problem,
    output_problem,
    probe_expected,
    readable_error,
    shape_problem,
    shape_text,
)
from grader.engine.kinds import kind_get

ALL_KINDS = frozenset(reference.KINDS)


class JudgeInternalError(RuntimeError):
    """The executor broke the protocol (e.g. did not return inputs it was asked for): ours."""


class Stability(Check):
    name = "stability"
    # The float32 probe's scores: ordinary ones, so what it tests is float32 arithmetic alone.
    FLOAT32_SCORE_SIZE = 1.0
    description = (
        "Scores (or softmax inputs) of magnitude `magnitudes` (1e3 to 1e4) must give finite, "
        "correct outputs: a softmax that exponentiates without subtracting the max overflows "
        "(or underflows to 0/0). Attention and softmax rows get a large offset (+ or -) plus a "
        "unit spread, so the right answer is not one-hot. The absolute tolerance grows with the "
        "magnitude (`atol_per_magnitude`), because float32 arithmetic, which a correct solution "
        "may use, cannot resolve differences finer than that in scores of that size. With "
        "`float32`, float32 inputs must give finite outputs within `rtol32`/`atol32`."
    )
    kinds = ALL_KINDS
    params = (
        Param(
            "magnitudes", list, [1e3, 1e4], "Typical size of the scores.", 1.0, 1e6, item_type=float
        ),
        Param("float32", bool, True, "Also test float32 inputs.", None, None),
        Param("rtol", float, 1e-4, "Relative tolerance (float64 inputs).", 0.0, 0.1),
        Param("atol", float, 1e-6, "Absolute tolerance (float64 inputs).", 0.0, 0.1),
        Param(
            "atol_per_magnitude",
            float,
            1e-6,
            "Added to atol per unit of score magnitude (1e-2 at 1e4).",
            0.0,
            1e-3,
        ),
        Param("rtol32", float, 1e-3, "Relative tolerance (float32 inputs).", 0.0, 0.1),
        Param("atol32", float, 1e-4, "Absolute tolerance (float32 inputs).", 0.0, 0.1),
    )

    def label_for(self, params: Mapping[str, Any]) -> str:
        magnitudes = and_list([f"{float(size):g}" for size in params["magnitudes"]])
        if not params["float32"]:
            return messages.STABILITY_LABEL.format(magnitudes=magnitudes)
        return messages.STABILITY_LABEL_FLOAT32.format(
            magnitudes=magnitudes, size32=self.FLOAT32_SCORE_SIZE
        )

    def prepare(self, params, rng, kind) -> list[Probe]:
        probes = []
        for size in params["magnitudes"]:
            probes.append(self._probe(kind, rng, float(size), np.float64))
        if params["float32"]:
            probes.append(self._probe(kind, rng, self.FLOAT32_SCORE_SIZE, np.float32))
        return probes

    def _probe(self, kind: str, rng: np.random.Generator, size: float, dtype: type) -> Probe:
        is32 = dtype is np.float32
        info = {"f32": is32, "size": size}
        call, what = kind_get(kind).stability_call(rng, size, dtype)
        return Probe(call, f"{'float32' if is32 else 'float64'} {what}", info)

    def judge(self, params, probes, results, kind) -> Outcome:
        for probe, result in zip(probes, results, strict=True):
            if probe.info.get("f32"):
                rtol, atol = params["rtol32"], params["atol32"]
            else:
                rtol = params["rtol"]
                atol = params["atol"] + params["atol_per_magnitude"] * probe.info["size"]
            problem = compare_with_reference(kind, probe, result, rtol=rtol, atol=atol)
            if problem:
                return Outcome(False, problem)
        return Outcome(True, messages.PASSED)


class WeightsNormalized(Check):
    name = "weights-normalized"
    label_template = "Weights are non-negative and sum to 1"
    description = (
        "Attention: the weights (recovered with V = identity) are non-negative and every row sums "
        "to 1 within `atol`. Softmax: the outputs sum to 1 along the axis."
    )
    kinds = frozenset({reference.KIND_ATTENTION, reference.KIND_SOFTMAX})
    params = (Param("atol", float, 1e-6, "Allowed error of each sum.", 0.0, 0.1),)

    def prepare(self, params, rng, kind) -> list[Probe]:
        normalized = kind_get(kind).normalized_calls
        if normalized is None:
            raise ValueError(f"check {self.name!r} cannot judge a {kind!r} exercise")
        return [Probe(call, what, {"a": axis}) for call, what, axis in normalized(rng)]

    def judge(self, params, probes, results, kind) -> Outcome:
        for probe, result in zip(probes, results, strict=True):
            problem = output_problem(probe, result)
            if problem:
                return Outcome(False, problem)
            out = result.output
            expected_shape = probe_expected(kind, probe).shape
            problem = shape_problem(probe, out, expected_shape) or finite_problem(probe, out)
            if problem:
                return Outcome(False, problem)
            sums = np.sum(out.astype(np.float64), axis=probe.info["a"])
            worst = float(sums.flat[int(np.argmax(np.abs(sums - 1.0)))])
            if abs(worst - 1.0) > params["atol"] or np.min(out) < -params["atol"]:
                if np.min(out) < -params["atol"] and abs(worst - 1.0) <= params["atol"]:
                    worst = float(np.min(out))
                template = kind_get(kind).not_normalized
                return Outcome(False, template.format(what=probe.what, worst=worst))
        return Outcome(True, messages.PASSED)


class NoMutation(Check):
    name = "no-mutation"
    label_template = "Inputs are not changed"
    description = "The function must not modify its array arguments in place."
    kinds = ALL_KINDS
    params = ()

    def prepare(self, params, rng, kind) -> list[Probe]:
        call, what = kind_get(kind).no_mutation_call(rng)
        return [Probe(call, what)]

    def judge(self, params, probes, results, kind) -> Outcome:
        probe, result = probes[0], results[0]
        if result is not None and result.error is not None:
            # Nothing came back to compare: say the check could not run, not that it failed.
            error = readable_error(result.error)
            return Outcome(False, messages.MUTATION_NOT_RUN.format(what=probe.what, error=error))
        problem = output_problem(probe, result)
        if problem:
            return Outcome(False, problem)
        if result.inputs_after is None:
            raise JudgeInternalError("the executor did not return the inputs it was asked for")
        names = kind_get(kind).parameters
        arrays = [(i, a) for i, a in enumerate(probe.call.args) if isinstance(a, np.ndarray)]
        if len(result.inputs_after) != len(arrays):
            raise JudgeInternalError("the executor returned the wrong number of inputs")
        for (i, before), after in zip(arrays, result.inputs_after, strict=True):
            name = names[i] if i < len(names) else f"#{i + 1}"
            if after.shape != before.shape:
                return Outcome(False, messages.MUTATED_SHAPE.format(arg=name))
            if not np.array_equal(after, before, equal_nan=True):
                return Outcome(False, messages.MUTATED.format(arg=name))
        return Outcome(True, messages.PASSED)


__all__ = ["JudgeInternalError", "NoMutation", "Stability", "WeightsNormalized", "shape_text"]
