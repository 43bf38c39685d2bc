"""Checks that apply to more than one exercise kind: stability, normalisation, no mutation."""

from __future__ import annotations

import numpy as np

from grader.engine import reference
from grader.engine.checks import messages
from grader.engine.checks.base import (
    Check,
    Outcome,
    Param,
    Probe,
    compare_with_reference,
    finite_problem,
    output_problem,
    probe_expected,
    readable_error,
    shape_problem,
    shape_text,
)
from grader.engine.checks.inputs import (
    attention_call,
    mha_call,
    mha_weights,
    softmax_call,
    unit,
)

ALL_KINDS = frozenset(reference.KINDS)


class JudgeInternalError(RuntimeError):
    """The executor broke the protocol (e.g. did not return inputs it was asked for): ours."""


class Stability(Check):
    name = "stability"
    label = "Large scores and float32 inputs"
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

    def prepare(self, params, rng, kind) -> list[Probe]:
        probes = []
        for size in params["magnitudes"]:
            probes.append(self._probe(kind, rng, float(size), np.float64))
        if params["float32"]:
            probes.append(self._probe(kind, rng, 1.0, np.float32))
        return probes

    def _probe(self, kind: str, rng: np.random.Generator, size: float, dtype: type) -> Probe:
        is32 = dtype is np.float32
        info = {"f32": is32, "size": size}
        dtype_text = "float32" if is32 else "float64"
        # Rows alternate between +size and -size offsets (the sign is part of what is tested:
        # exp overflows on one, underflows to 0/0 on the other).
        signs = np.where(np.arange(6) % 2 == 0, 1.0, -1.0)
        if kind == reference.KIND_SOFTMAX:
            x = signs[:4, None] * size + unit(rng, (4, 9)) * 2.0
            what = f"{dtype_text} inputs of magnitude about {size:g}"
            return Probe(softmax_call(x.astype(dtype)), what, info)
        if kind == reference.KIND_ATTENTION:
            d_k = 16
            q, k = unit(rng, (6, d_k)), unit(rng, (8, d_k))
            # Column 0 adds the same offset (a_i · b / √d_k = ±size) to every score of row i.
            b = np.sqrt(size * np.sqrt(d_k))
            q[:, 0], k[:, 0] = signs * b, b
            v = unit(rng, (8, 5))
            what = f"{dtype_text} Q, K, V with scores of magnitude about {size:g}"
            return Probe(
                attention_call(q.astype(dtype), k.astype(dtype), v.astype(dtype)), what, info
            )
        d_model, n_heads = 32, 4
        x = (unit(rng, (5, d_model)) * np.sqrt(size)).astype(dtype)
        # X·W keeps the std of X, so per-head scaled scores have std about `size`.
        weights = tuple(w.astype(dtype) for w in mha_weights(rng, d_model))
        what = f"{dtype_text} inputs with per-head scores of magnitude about {size:g}"
        return Probe(mha_call(x, weights, n_heads), what, info)

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
    label = "Weights are non-negative and sum to 1"
    description = (
        "Attention: the weights (recovered with V = identity) are non-negative and every row sums "
        "to 1 within `atol`. Softmax: the outputs sum to 1 along the axis."
    )
    kinds = frozenset({reference.KIND_ATTENTION, reference.KIND_SOFTMAX})
    params = (Param("atol", float, 1e-6, "Allowed error of each sum.", 0.0, 0.1),)

    def prepare(self, params, rng, kind) -> list[Probe]:
        if kind == reference.KIND_SOFTMAX:
            return [
                Probe(
                    softmax_call(unit(rng, (6, 10)) * 3.0), "random x of shape (6, 10)", {"a": -1}
                ),
                Probe(
                    softmax_call(unit(rng, (4, 5, 6)) * 3.0, 1),
                    "random x of shape (4, 5, 6) with axis=1",
                    {"a": 1},
                ),
            ]
        n, m, d_k = 7, 9, 16
        call = attention_call(unit(rng, (n, d_k)), unit(rng, (m, d_k)), np.eye(m))
        return [Probe(call, f"random Q and K (d_k = {d_k}) with V = identity", {"a": -1})]

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
                template = (
                    messages.SOFTMAX_NOT_NORMALIZED
                    if kind == reference.KIND_SOFTMAX
                    else messages.NOT_NORMALIZED
                )
                return Outcome(False, template.format(what=probe.what, worst=worst))
        return Outcome(True, messages.PASSED)


class NoMutation(Check):
    name = "no-mutation"
    label = "Inputs are not changed"
    description = "The function must not modify its array arguments in place."
    kinds = ALL_KINDS
    params = ()

    ARG_NAMES = {
        reference.KIND_ATTENTION: ("Q", "K", "V", "mask"),
        reference.KIND_MULTI_HEAD: ("X", "W_q", "W_k", "W_v", "W_o", "n_heads", "mask"),
        reference.KIND_SOFTMAX: ("x", "axis"),
    }

    def prepare(self, params, rng, kind) -> list[Probe]:
        if kind == reference.KIND_SOFTMAX:
            call = softmax_call(unit(rng, (5, 7)) * 3.0, return_inputs=True)
            return [Probe(call, "random x of shape (5, 7)")]
        if kind == reference.KIND_ATTENTION:
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
            return [Probe(call, f"random Q, K, V (d_k = {d_k}) with a mask")]
        d_model, n_heads, n = 16, 4, 5
        call = mha_call(
            unit(rng, (n, d_model)),
            mha_weights(rng, d_model),
            n_heads,
            np.tril(np.ones((n, n), dtype=bool)),
            return_inputs=True,
        )
        return [Probe(call, f"random X (d_model = {d_model}, {n_heads} heads) with a mask")]

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
        names = self.ARG_NAMES[kind]
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
