"""Checks of the attention backward exercise: ``attention_backward(Q, K, V, dO, mask=None)``.

The tuple (dQ, dK, dV) arrives as one array of shape (3, ..., n, d) (``kinds.attention_backward``
says why), so every input here has n_q = n_k and d_k = d_v, and each message names the gradient
that is wrong. ``attention-backward-finite-differences`` judges against central differences of
sum(O * dO), computed here from the reference's forward pass: no backward formula of ours is in
that expectation. ``attention-backward-values`` and ``attention-backward-mask`` compare with the
reference on larger, batched and masked inputs; ``attention-backward-vanishing`` holds the
gradient into Q and K of a saturated softmax to the reference's, absolutely, as the softmax
backward's ``backward-vanishing`` does entry by entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from grader.engine import messages, reference
from grader.engine.checks.base import (
    ATOL64,
    ATOL64_PARAM,
    RTOL64_PARAM,
    Check,
    Outcome,
    Param,
    Probe,
    and_list,
    finite_problem,
    output_problem,
    probe_expected,
    rounded_to,
    shape_text,
)
from grader.engine.executors.base import RAGGED_RETURN, CallResult
from grader.engine.inputs import (
    attention_backward_call,
    attention_backward_inputs,
    causal_mask,
    key_mask,
)

ATTENTION_BACKWARD = frozenset({reference.KIND_ATTENTION_BACKWARD})

# Central differences with a step of 1e-5 are exact to about 1e-10 on these inputs.
FD_STEP = 1e-5


def gradients_problem(
    probe: Probe,
    result: CallResult | None,
    expected: np.ndarray,
    *,
    rtol: float,
    atol: float,
    against: str = messages.ATTN_BACKWARD_AGAINST_REFERENCE,
    parts: tuple[int, ...] = (0, 1, 2),
) -> str | None:
    """A finite numeric (3, ..., n, d) array, each of its ``parts`` (0 dQ, 1 dK, 2 dV) within
    tolerance."""
    shape = shape_text(expected.shape[1:])
    if result is not None and result.error is not None and RAGGED_RETURN in result.error:
        return messages.ATTN_BACKWARD_RAGGED.format(what=probe.what, shape=shape)
    problem = output_problem(probe, result)
    if problem is not None:
        return problem
    assert result is not None and result.output is not None
    out = result.output
    if out.shape != expected.shape:
        return messages.ATTN_BACKWARD_SHAPE.format(
            what=probe.what, shape=shape, got=shape_text(out.shape)
        )
    problem = finite_problem(probe, out)
    if problem is not None:
        return problem
    out64 = out.astype(np.float64)
    for part in parts:
        grad, got, want = messages.GRADIENT_NAMES[part], out64[part], expected[part]
        diff = np.abs(got - want)
        if np.all(diff <= atol + rtol * np.abs(want)):
            continue
        decimals = rounded_to(out64, expected)
        if decimals is not None:
            return messages.ROUNDED.format(
                what=probe.what, decimals=decimals, diff=float(np.max(diff))
            )
        return messages.ATTN_BACKWARD_VALUES.format(
            what=probe.what,
            grad=grad,
            against=against,
            diff=float(np.max(diff)),
            rtol=rtol,
            atol=atol,
        )
    return None


def _judge(
    kind: str, probes: Sequence[Probe], results: Sequence[CallResult], params: Mapping[str, Any]
) -> Outcome:
    for probe, result in zip(probes, results, strict=True):
        problem = gradients_problem(
            probe, result, probe_expected(kind, probe), rtol=params["rtol"], atol=params["atol"]
        )
        if problem:
            return Outcome(False, problem)
    return Outcome(True, messages.PASSED)


def _what(shape: tuple[int, ...], extra: str = "") -> str:
    return f"Q, K, V and dO of shape {shape_text(shape)}{extra}"


class AttentionBackwardFiniteDifferences(Check):
    name = "attention-backward-finite-differences"
    label_template = "The gradients against finite differences"
    description = (
        "Small float64 Q, K, V and dO (a matrix, a batched stack, a causal mask): dQ, dK and "
        "dV against central differences (step 1e-5) of sum(O * dO), from the forward pass "
        "alone, within `rtol`/`atol`."
    )
    kinds = ATTENTION_BACKWARD
    params = (
        Param("rtol", float, 1e-5, "Relative tolerance against the differences.", 0.0, 0.1),
        Param("atol", float, 1e-7, "Absolute tolerance against the differences.", 0.0, 0.1),
    )

    CASES: tuple[tuple[tuple[int, ...], bool], ...] = (((4, 3), False), ((2, 3, 2), False))
    MASKED_SHAPE = (4, 3)

    def prepare(self, params, rng, kind) -> list[Probe]:
        probes = []
        for shape, _ in self.CASES:
            args = attention_backward_inputs(rng, shape)
            fd = np.stack(reference.attention_finite_differences(*args, step=FD_STEP))
            probes.append(Probe(attention_backward_call(*args), _what(shape), {"fd": fd}))
        args = attention_backward_inputs(rng, self.MASKED_SHAPE)
        mask = causal_mask(self.MASKED_SHAPE[-2])
        fd = np.stack(reference.attention_finite_differences(*args, mask, step=FD_STEP))
        what = _what(self.MASKED_SHAPE, " and a causal mask")
        probes.append(Probe(attention_backward_call(*args, mask), what, {"fd": fd}))
        return probes

    def judge(self, params, probes, results, kind) -> Outcome:
        for probe, result in zip(probes, results, strict=True):
            problem = gradients_problem(
                probe,
                result,
                probe.info["fd"],
                rtol=params["rtol"],
                atol=params["atol"],
                against=messages.ATTN_BACKWARD_AGAINST_FD,
            )
            if problem:
                return Outcome(False, problem)
        return Outcome(True, messages.PASSED)


class AttentionBackwardValues(Check):
    name = "attention-backward-values"
    label_template = "The gradients, with batch axes"
    description = (
        "Unit-variance Q, K, V and dO with none to two leading batch axes and up to 9 tokens: "
        "dQ, dK and dV against the reference's at float64 tolerances."
    )
    kinds = ATTENTION_BACKWARD
    params = (RTOL64_PARAM, ATOL64_PARAM)

    SHAPES = ((9, 6), (3, 7, 5), (2, 3, 6, 4), (1, 1, 8, 3))

    def prepare(self, params, rng, kind) -> list[Probe]:
        return [
            Probe(attention_backward_call(*attention_backward_inputs(rng, shape)), _what(shape))
            for shape in self.SHAPES
        ]

    def judge(self, params, probes, results, kind) -> Outcome:
        return _judge(kind, probes, results, params)


class AttentionBackwardMask(Check):
    name = "attention-backward-mask"
    label_template = "The gradients with a mask"
    description = (
        "A random mask of the scores' shape, a causal mask shared by a batch and a key-padding "
        "mask of shape (n,): no gradient may reach a masked score, so dK and dV of a key "
        "nobody may attend to are 0."
    )
    kinds = ATTENTION_BACKWARD
    params = (RTOL64_PARAM, ATOL64_PARAM)

    def prepare(self, params, rng, kind) -> list[Probe]:
        probes = []
        args = attention_backward_inputs(rng, (7, 4))
        call = attention_backward_call(*args, key_mask(rng, (7, 7)))
        probes.append(Probe(call, _what((7, 4), " and a random (7, 7) mask")))
        args = attention_backward_inputs(rng, (2, 6, 5))
        call = attention_backward_call(*args, causal_mask(6))
        probes.append(Probe(call, _what((2, 6, 5), " and a causal (6, 6) mask")))
        padding = np.ones(6, dtype=bool)
        padding[-2:] = False
        args = attention_backward_inputs(rng, (3, 6, 4))
        call = attention_backward_call(*args, padding)
        probes.append(
            Probe(call, _what((3, 6, 4), " and a mask of shape (6,) (the last two keys)"))
        )
        return probes

    def judge(self, params, probes, results, kind) -> Outcome:
        return _judge(kind, probes, results, params)


class AttentionBackwardVanishing(Check):
    name = "attention-backward-vanishing"
    description = (
        "Q and K multiplied by each of `scales` (scores of std about scale²): a saturated "
        "softmax whose gradient into Q and K all but vanishes. dQ and dK must stay within "
        "`atol` times max|K| of the reference's (float64 rounding of the largest weight's terms), "
        "not clipped or renormalised; dV within `rtol` of the reference's. The softmax "
        "backward's `backward-vanishing` holds the same gradient entry by entry."
    )
    kinds = ATTENTION_BACKWARD
    params = (
        Param(
            "scales",
            list,
            [8.0, 16.0],
            "Factors on Q and K (the scores grow with their square).",
            1.0,
            100.0,
            item_type=float,
        ),
        Param("rtol", float, 1e-6, "Relative tolerance of dV.", 0.0, 0.1),
        Param(
            "atol", float, 1e-10, "Absolute tolerance of dQ and dK, per unit of max|K|.", 0.0, 1e-3
        ),
    )

    SHAPE = (6, 4)

    def label_for(self, params: Mapping[str, Any]) -> str:
        scales = and_list([f"{float(s):g}" for s in params["scales"]])
        return messages.ATTN_BACKWARD_VANISHING_LABEL.format(scales=scales)

    def prepare(self, params, rng, kind) -> list[Probe]:
        probes = []
        for scale in params["scales"]:
            args = attention_backward_inputs(rng, self.SHAPE, float(scale))
            what = _what(self.SHAPE, f", Q and K multiplied by {float(scale):g}")
            probes.append(Probe(attention_backward_call(*args), what))
        return probes

    def judge(self, params, probes, results, kind) -> Outcome:
        for probe, result in zip(probes, results, strict=True):
            expected = probe_expected(kind, probe)
            size = float(np.max(np.abs(np.asarray(probe.call.args[1]))))
            atol = params["atol"] * size
            # dV at the usual tolerance; dQ and dK absolutely, with a message of their own.
            problem = gradients_problem(
                probe, result, expected, rtol=params["rtol"], atol=ATOL64, parts=(2,)
            )
            if problem is None:
                assert result is not None and result.output is not None
                problem = _vanishing_problem(probe, result.output, expected, atol)
            if problem:
                return Outcome(False, problem)
        return Outcome(True, messages.PASSED)


def _vanishing_problem(
    probe: Probe, out: np.ndarray, expected: np.ndarray, atol: float
) -> str | None:
    for grad, got, want in zip(messages.GRADIENT_NAMES[:2], out[:2], expected[:2], strict=True):
        diff = np.abs(got.astype(np.float64) - want)
        if np.any(diff > atol):
            return messages.ATTN_BACKWARD_VANISHING.format(
                what=probe.what,
                grad=grad[1:],
                expected=float(np.max(np.abs(want))),
                got=float(np.max(np.abs(got))),
            )
    return None
