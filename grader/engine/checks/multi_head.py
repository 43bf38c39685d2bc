"""Checks of multi-head attention:
``multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None)``."""

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
from grader.engine.inputs import causal_mask, key_mask, mha_call, mha_weights, unit

MULTI_HEAD = frozenset({reference.KIND_MULTI_HEAD})


class MultiHeadValues(Check):
    name = "mha-values"
    label_template = "Heads split, scaled by √d_head, concatenated and projected"
    description = (
        "Random X and weights (variance 1/d_model) for each [d_model, n_heads] in `configs`, "
        "compared with the reference."
    )
    kinds = MULTI_HEAD
    params = (
        Param(
            "configs",
            list,
            [[8, 2], [16, 4], [48, 3], [64, 8]],
            "Pairs [d_model, n_heads]; n_heads must divide d_model.",
            1,
            1024,
            item_type=int,
            item_length=2,
        ),
        Param("n", int, 6, "Sequence length.", 1, 256),
        RTOL_PARAM,
        ATOL_PARAM,
    )

    def prepare(self, params, rng, kind) -> list[Probe]:
        n = params["n"]
        probes = []
        for d_model, n_heads in params["configs"]:
            if d_model % n_heads:
                continue
            call = mha_call(unit(rng, (n, d_model)), mha_weights(rng, d_model), n_heads)
            what = f"random X of shape ({n}, {d_model}) with {n_heads} heads"
            probes.append(Probe(call, what))
        return probes

    def judge(self, params, probes, results, kind) -> Outcome:
        return judge_against_reference(kind, probes, results, params)


class HeadWidth(Check):
    name = "mha-head-width"
    label_template = "d_model = {d_model} with {n_heads} heads: the head width goes under the root"
    description = (
        "A wide model: each head must divide its scores by √d_head (√64 by default), not √d_model."
    )
    kinds = MULTI_HEAD
    params = (
        Param("d_model", int, 512, "Model width.", 8, 2048),
        Param("n_heads", int, 8, "Number of heads (divides d_model).", 1, 64),
        Param("n", int, 16, "Sequence length.", 2, 256),
        RTOL_PARAM,
        ATOL_PARAM,
    )

    def prepare(self, params, rng, kind) -> list[Probe]:
        d_model, n_heads, n = params["d_model"], params["n_heads"], params["n"]
        if d_model % n_heads:
            return []
        call = mha_call(unit(rng, (n, d_model)), mha_weights(rng, d_model), n_heads)
        what = (
            f"random X of shape ({n}, {d_model}), d_model = {d_model} with {n_heads} heads "
            f"(d_head = {d_model // n_heads})"
        )
        return [Probe(call, what)]

    def judge(self, params, probes, results, kind) -> Outcome:
        return judge_against_reference(kind, probes, results, params)


class MultiHeadShapes(Check):
    name = "mha-shapes"
    label_template = "Batch dimensions and mask broadcasting"
    description = (
        "2-D, 3-D and 4-D X; a causal mask (n, n) shared by the batch and a key-padding mask "
        "(batch, 1, n). The output shape must be exact and the values right."
    )
    kinds = MULTI_HEAD
    params = (RTOL_PARAM, ATOL_PARAM)

    CASES = (
        ((5, 16), 4, None, "2-D X"),
        ((3, 5, 16), 4, None, "3-D X (a batch)"),
        ((2, 2, 4, 12), 3, None, "4-D X"),
        ((3, 5, 16), 2, "causal", "a causal mask of shape (n, n)"),
        ((3, 5, 16), 4, "padding", "a key-padding mask of shape (batch, 1, n)"),
    )

    def prepare(self, params, rng, kind) -> list[Probe]:
        probes = []
        for x_shape, n_heads, mask_kind, about in self.CASES:
            n = x_shape[-2]
            mask = None
            if mask_kind == "causal":
                mask = causal_mask(n)
            elif mask_kind == "padding":
                mask = key_mask(rng, (x_shape[0], 1, n), p_keep=0.7)
                mask[..., 0] = True
            call = mha_call(unit(rng, x_shape), mha_weights(rng, x_shape[-1]), n_heads, mask)
            what = f"{about}: X {shape_text(x_shape)}, {n_heads} heads"
            if mask is not None:
                what += f", mask {shape_text(mask.shape)}"
            probes.append(Probe(call, what))
        return probes

    def judge(self, params, probes, results, kind) -> Outcome:
        return judge_against_reference(kind, probes, results, params)
