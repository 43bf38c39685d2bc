"""Checks of scaled dot-product attention: ``attention(Q, K, V, mask=None)``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from grader.engine import messages, reference
from grader.engine.checks.base import (
    ATOL_PARAM,
    RTOL_PARAM,
    Check,
    Outcome,
    Param,
    Probe,
    compare_with_reference,
    finite_problem,
    output_problem,
    shape_problem,
    shape_text,
)
from grader.engine.executors.base import CallResult
from grader.engine.inputs import (
    WORKED_K,
    WORKED_OUTPUT,
    WORKED_Q,
    WORKED_V,
    attention_call,
    key_mask,
    unit,
)

ATTENTION = frozenset({reference.KIND_ATTENTION})


SCALE_FAILED = "Your output is wrong at d_k = {failed} and right at d_k = {passed}. {detail}"
SCALE_FAILED_ALL = "Your output is wrong at every d_k tested ({failed}). {detail}"

# Messages of the whole batch of calls, so a run that stopped early can name the call.


def _first_problem(
    kind: str,
    probes: Sequence[Probe],
    results: Sequence[CallResult | None],
    rtol: float,
    atol: float,
) -> str | None:
    for probe, result in zip(probes, results, strict=True):
        problem = compare_with_reference(kind, probe, result, rtol=rtol, atol=atol)
        if problem:
            return problem
    return None


class WorkedExample(Check):
    name = "worked-example"
    WHAT = messages.WORKED_EXAMPLE_WHAT.format(n=WORKED_Q.shape[0], d_k=WORKED_Q.shape[1])
    label_template = WHAT[0].upper() + WHAT[1:]
    description = "The hand-worked example of the question page, exact to `atol`."
    kinds = ATTENTION
    params = (Param("atol", float, 1e-3, "Absolute tolerance.", 0.0, 0.1),)

    def prepare(self, params: Mapping[str, Any], rng: np.random.Generator, kind: str) -> list:
        call = attention_call(WORKED_Q.copy(), WORKED_K.copy(), WORKED_V.copy())
        return [Probe(call, self.WHAT)]

    def judge(self, params, probes, results, kind) -> Outcome:
        probe, result = probes[0], results[0]
        problem = output_problem(probe, result)
        if problem is None:
            out = result.output
            problem = shape_problem(probe, out, WORKED_OUTPUT.shape) or finite_problem(probe, out)
            if problem is None and not np.allclose(out, WORKED_OUTPUT, rtol=0, atol=params["atol"]):
                problem = messages.WORKED_EXAMPLE.format(
                    what=probe.what,
                    expected=np.round(WORKED_OUTPUT, 3).tolist(),
                    got=np.round(out.astype(np.float64), 3).tolist(),
                    atol=params["atol"],
                )
        return Outcome(problem is None, problem or messages.PASSED)


class Shapes(Check):
    name = "shapes"
    label_template = "Shapes, batch dimensions and broadcasting"
    description = (
        "n ≠ m, d_v ≠ d_k, a single query, 2-D and 4-D inputs, broadcasting of batch dimensions "
        "and of the mask. The output shape must be exact and the values right."
    )
    kinds = ATTENTION
    params = (RTOL_PARAM, ATOL_PARAM)

    # (Q shape, K shape, V shape, mask shape or None, what it tests)
    CASES: tuple[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], Any, str], ...] = (
        ((3, 4), (5, 4), (5, 2), None, "n ≠ m and d_v ≠ d_k"),
        ((1, 8), (6, 8), (6, 3), None, "a single query"),
        ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), None, "4-D inputs"),
        ((2, 3, 4, 8), (3, 5, 8), (3, 5, 6), None, "batch broadcasting of K and V"),
        ((4, 8), (2, 5, 8), (2, 5, 6), None, "batch broadcasting of Q"),
        ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), (5,), "a key-padding mask of shape (m,)"),
        ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), (2, 1, 1, 5), "a per-batch mask"),
        ((2, 4, 8), (2, 5, 8), (2, 5, 6), (4, 5), "one mask shared by the batch"),
    )

    def prepare(self, params, rng, kind) -> list[Probe]:
        probes = []
        for q_shape, k_shape, v_shape, mask_shape, about in self.CASES:
            mask = None
            if mask_shape is not None:
                mask = key_mask(rng, mask_shape, p_keep=0.7)
                # Every query row must keep an allowed key after broadcasting: force key 0 on.
                mask[..., 0] = True
            call = attention_call(unit(rng, q_shape), unit(rng, k_shape), unit(rng, v_shape), mask)
            what = (
                f"{about}: Q {shape_text(q_shape)}, K {shape_text(k_shape)}, "
                f"V {shape_text(v_shape)}"
            )
            if mask_shape is not None:
                what += f", mask {shape_text(mask_shape)}"
            probes.append(Probe(call, what))
        return probes

    def judge(self, params, probes, results, kind) -> Outcome:
        problem = _first_problem(kind, probes, results, params["rtol"], params["atol"])
        return Outcome(problem is None, problem or messages.PASSED)


class Scale(Check):
    name = "scale"
    label_template = "Scores divided by √d_k at every head size"
    description = (
        "Random unit-variance Q, K, V at each d_k in `d_ks`, compared with the reference "
        "within rtol/atol. A function with no scale, or a constant right for one d_k only, fails."
    )
    kinds = ATTENTION
    params = (
        Param(
            "d_ks", list, [4, 16, 64, 128, 256], "Key dimensions to test.", 1, 2048, item_type=int
        ),
        Param("n", int, 8, "Number of queries.", 1, 256),
        Param("m", int, 10, "Number of keys.", 1, 256),
        Param("d_v", int, 6, "Value dimension.", 1, 256),
        RTOL_PARAM,
        ATOL_PARAM,
    )

    def prepare(self, params, rng, kind) -> list[Probe]:
        n, m, d_v = params["n"], params["m"], params["d_v"]
        return [
            Probe(
                attention_call(unit(rng, (n, d_k)), unit(rng, (m, d_k)), unit(rng, (m, d_v))),
                f"random unit-variance Q and K with d_k = {d_k} (n = {n}, m = {m}, d_v = {d_v})",
                {"d_k": d_k},
            )
            for d_k in params["d_ks"]
        ]

    def judge(self, params, probes, results, kind) -> Outcome:
        failed, passed, detail, rounded = [], [], "", True
        for probe, result in zip(probes, results, strict=True):
            problem = compare_with_reference(
                kind, probe, result, rtol=params["rtol"], atol=params["atol"]
            )
            if problem:
                failed.append(str(probe.info["d_k"]))
                detail = detail or problem
                rounded = rounded and problem.endswith(messages.ROUNDED_FIX)
            else:
                passed.append(str(probe.info["d_k"]))
        if not failed:
            return Outcome(True, messages.PASSED)
        if rounded:
            return Outcome(False, detail)  # right at every d_k, but for the rounding
        template = SCALE_FAILED if passed else SCALE_FAILED_ALL
        text = template.format(failed=", ".join(failed), passed=", ".join(passed), detail=detail)
        return Outcome(False, text)


def weight_stats(weights: np.ndarray) -> tuple[float, float]:
    """Mean top weight and mean row entropy (nats) of attention weights (rows on the last axis)."""
    w = np.clip(weights.astype(np.float64), 0.0, None)
    top = float(np.mean(np.max(w, axis=-1)))
    logs = np.log(np.where(w > 0, w, 1.0))
    entropy = float(np.mean(-np.sum(w * logs, axis=-1)))
    return top, entropy


class Saturation(Check):
    name = "saturation"
    label_template = "No saturation at d_k = {d_k}"
    description = (
        "At a large d_k, the attention weights (recovered by calling with V = identity) keep the "
        "reference's spread: mean top weight and mean row entropy within tolerance. An unscaled "
        "function puts nearly all weight on one key. The message reports both numbers."
    )
    kinds = ATTENTION
    params = (
        Param("d_k", int, 512, "Key dimension.", 64, 4096),
        Param("n", int, 32, "Number of queries (rows averaged over).", 4, 512),
        Param("m", int, 16, "Number of keys.", 2, 256),
        Param("top_tol", float, 0.05, "Allowed difference of the mean top weight.", 0.0, 1.0),
        Param("entropy_tol", float, 0.15, "Allowed difference of the entropy (nats).", 0.0, 5.0),
    )

    def prepare(self, params, rng, kind) -> list[Probe]:
        n, m, d_k = params["n"], params["m"], params["d_k"]
        call = attention_call(unit(rng, (n, d_k)), unit(rng, (m, d_k)), np.eye(m))
        return [Probe(call, f"random unit-variance Q and K with d_k = {d_k} and V = identity")]

    def judge(self, params, probes, results, kind) -> Outcome:
        probe, result = probes[0], results[0]
        problem = output_problem(probe, result)
        if problem:
            return Outcome(False, problem)
        q, k, _ = probe.call.args[:3]
        ref = reference.attention_weights(q, k)
        out = result.output
        problem = shape_problem(probe, out, ref.shape) or finite_problem(probe, out)
        if problem:
            return Outcome(False, problem)
        top, entropy = weight_stats(out)
        ref_top, ref_entropy = weight_stats(ref)
        numbers = {
            "d_k": params["d_k"],
            "top": top,
            "entropy": entropy,
            "ref_top": ref_top,
            "ref_entropy": ref_entropy,
            "top_tol": params["top_tol"],
            "entropy_tol": params["entropy_tol"],
        }
        ok = (
            abs(top - ref_top) <= params["top_tol"]
            and abs(entropy - ref_entropy) <= params["entropy_tol"]
        )
        template = messages.SATURATION_PASSED if ok else messages.SATURATION
        return Outcome(ok, template.format(**numbers))


class Mask(Check):
    name = "mask"
    label_template = "Masked keys get zero weight"
    description = (
        "A boolean mask (True = may attend): masked keys get zero weight (recovered with "
        "V = identity, within `leak_atol`), and the outputs match the reference, including a "
        "mask broadcast over 4-D inputs."
    )
    kinds = ATTENTION
    params = (
        Param("n", int, 6, "Number of queries.", 1, 256),
        Param("m", int, 9, "Number of keys.", 2, 256),
        Param("d_k", int, 16, "Key dimension.", 1, 1024),
        Param("leak_atol", float, 1e-6, "Largest weight allowed on a masked key.", 0.0, 0.1),
        RTOL_PARAM,
        ATOL_PARAM,
    )

    def prepare(self, params, rng, kind) -> list[Probe]:
        n, m, d_k = params["n"], params["m"], params["d_k"]
        mask = key_mask(rng, (n, m))
        weights_call = attention_call(unit(rng, (n, d_k)), unit(rng, (m, d_k)), np.eye(m), mask)
        batch_mask = key_mask(rng, (2, 1, 1, m))
        batch_mask[..., 0] = True
        batch_call = attention_call(
            unit(rng, (2, 3, n, d_k)),
            unit(rng, (2, 3, m, d_k)),
            unit(rng, (2, 3, m, 5)),
            batch_mask,
        )
        return [
            Probe(weights_call, f"a random mask of shape ({n}, {m}) with V = identity", {"w": 1}),
            Probe(batch_call, f"4-D inputs with a per-batch mask of shape (2, 1, 1, {m})"),
        ]

    def judge(self, params, probes, results, kind) -> Outcome:
        weights_probe, weights_result = probes[0], results[0]
        problem = output_problem(weights_probe, weights_result)
        if problem is None:
            mask = np.asarray(weights_probe.call.args[3], dtype=bool)
            out = weights_result.output
            problem = shape_problem(weights_probe, out, mask.shape) or finite_problem(
                weights_probe, out
            )
            if problem is None:
                leak = float(np.max(np.abs(out[~mask]), initial=0.0))
                if leak > params["leak_atol"]:
                    problem = messages.MASK_LEAK.format(what=weights_probe.what, leak=leak)
        problem = problem or _first_problem(kind, probes, results, params["rtol"], params["atol"])
        return Outcome(problem is None, problem or messages.PASSED)
