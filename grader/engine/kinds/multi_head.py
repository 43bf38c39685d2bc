"""Multi-head attention: ``multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None)``.

No Django imports. What is particular to this kind (see ``kinds.attention`` for the layout).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from grader.engine import reference
from grader.engine.checks.inputs import (
    WORKED_K,
    WORKED_Q,
    causal_mask,
    mha_call,
    mha_weights,
    unit,
)
from grader.engine.executors.base import Arg, Call
from grader.engine.kinds.base import (
    BATCH,
    LARGE,
    MASK,
    PLAIN,
    WEIGHTS,
    DiagnosticProbe,
    Kind,
    WeightTriples,
    WrongImplementation,
    batched,
    probe,
)
from grader.engine.kinds.multi_head_mistakes import (
    mha_divide_by_8,
    mha_global_max,
    mha_interleaved_heads,
    mha_mask_ignored,
    mha_mask_inverted,
    mha_missing_output_projection,
    mha_missing_scale,
    mha_naive_softmax,
    mha_no_projections,
    mha_qkv_weights_transposed,
    mha_reshape_heads_first,
    mha_returns_heads,
    mha_rounded,
    mha_scale_by_d_head,
    mha_scale_by_model_width,
    mha_scale_values,
    mha_scales_weights_in_place,
    mha_softmax_over_queries,
    mha_strided_heads,
    mha_three_dims_only,
    mha_unnormalized,
    mha_variant,
    mha_weights_transposed,
)
from grader.engine.trials import (
    MAX_DIM,
    MSG_HEADS,
    MSG_WEIGHT_SHAPE,
    ROLE_ARRAY,
    ROLE_INT,
    ROLE_MASK,
    ArgSpec,
    TrialCase,
    TrialInputError,
    _array_arg,
    _check_mask,
    _custom_case,
    _int_value,
    _mask_arg,
    shape_text,
)

NAME = reference.KIND_MULTI_HEAD

REFERENCE_SOURCE = '''import numpy as np


def _attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    return (weights / weights.sum(axis=-1, keepdims=True)) @ V


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    """Each head attends over its own d_head = d_model / n_heads columns."""
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads

    def split(t):
        # (..., n, d_model) -> (..., n_heads, n, d_head)
        return np.swapaxes(t.reshape(*lead, n, n_heads, d_head), -2, -3)

    q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        while mask.ndim < 2:
            mask = mask[np.newaxis]
        mask = mask[..., np.newaxis, :, :]  # the same mask for every head
    heads = _attention(q, k, v, mask)
    concat = np.swapaxes(heads, -2, -3).reshape(*lead, n, d_model)
    return concat @ W_o
'''

_MASKED = frozenset({MASK})
_LARGE = frozenset({LARGE})
_BATCH = frozenset({BATCH})
_PLAIN = frozenset({PLAIN})


def _wrong(
    code: str,
    func: object,
    tags: frozenset[str] = _PLAIN,
    variant: tuple[str, str] | None = None,
) -> WrongImplementation:
    return WrongImplementation(code, NAME, func, tags, variant)  # type: ignore[arg-type]


WRONG_IMPLEMENTATIONS: tuple[WrongImplementation, ...] = (
    _wrong("missing-scale", mha_missing_scale, variant=("scale", "none")),
    _wrong("scale-by-d", mha_scale_by_d_head, variant=("scale", "d_head")),
    _wrong("scale-by-model-width", mha_scale_by_model_width, variant=("scale", "sqrt_d_model")),
    _wrong("hardcoded-scale", mha_divide_by_8),
    _wrong("wrong-head-split", mha_interleaved_heads, variant=("split", "interleaved")),
    _wrong("missing-output-projection", mha_missing_output_projection, variant=("out", "none")),
    _wrong("mask-ignored", mha_mask_ignored, _MASKED, ("mask_how", "ignored")),
    _wrong("unstable-softmax", mha_naive_softmax, _LARGE, ("softmax", "naive")),
    _wrong("mutates-input", mha_scales_weights_in_place),
    _wrong("wrong-shape", mha_returns_heads),
    _wrong("scale-values", mha_scale_values),
    _wrong("softmax-wrong-axis", mha_softmax_over_queries, variant=("softmax", "queries")),
    _wrong("unnormalized-weights", mha_unnormalized, variant=("softmax", "unnormalized")),
    _wrong("mask-inverted", mha_mask_inverted, _MASKED, ("mask_how", "inverted")),
    _wrong("unstable-softmax", mha_global_max, _LARGE),
    _wrong("weights-transposed", mha_weights_transposed, variant=("proj", "transposed")),
    _wrong("weights-transposed", mha_qkv_weights_transposed, variant=("proj", "transposed_qkv")),
    _wrong("missing-projections", mha_no_projections, variant=("proj", "none")),
    _wrong("wrong-head-split", mha_reshape_heads_first, variant=("split", "heads_first")),
    _wrong("wrong-head-split", mha_strided_heads),
    _wrong("rounded-output", mha_rounded),
    _wrong("batch-fixed-ndim", mha_three_dims_only, _BATCH),
)


# --- diagnostic inputs -------------------------------------------------------------------------


def diagnostic_probes(rng: np.random.Generator) -> list[DiagnosticProbe]:
    """Inputs that tell the known misconceptions apart; every one comes again with leading
    batch axes on X (the weight matrices are never batched)."""
    probes = [
        probe(mha_call(unit(rng, (n, d)), mha_weights(rng, d), h, return_inputs=True), PLAIN)
        for d, h, n in ((16, 4, 5), (48, 3, 6), (32, 2, 4), (24, 6, 5))
    ]
    # Causal, with the last key blocked for every query too: every row then has an allowed
    # and a blocked key, so a mask read the wrong way round never blocks a whole row.
    mask = causal_mask(6)
    mask[-1, -1] = False
    probes.append(probe(mha_call(unit(rng, (6, 16)), mha_weights(rng, 16), 4, mask), MASK))
    probes.append(
        probe(mha_call(unit(rng, (5, 16)) * np.sqrt(1e3), mha_weights(rng, 16), 4), LARGE)
    )
    probes += [
        probe(_weights_call(rng, n_heads, d_head, n), WEIGHTS)
        for n_heads, d_head, n in ((2, 9, 5), (2, 36, 5), (1, 100, 5))
    ]
    return probes + batched(probes, 1)


def _weights_call(rng: np.random.Generator, n_heads: int, d_head: int, n: int) -> Call:
    """Inputs whose output shows each head's weights (needs n <= d_head).

    X's rows are the first n unit vectors, so X·W is the first n rows of W: Q and K get unit
    variance entries from W_q, W_k. W_v gives each head the identity (padded with zeros) as its
    values and W_o = I, so columns h·d_head … h·d_head + n - 1 of the output are head h's weights.
    """
    d_model = n_heads * d_head
    x = np.eye(n, d_model)
    w_q, w_k = unit(rng, (d_model, d_model)), unit(rng, (d_model, d_model))
    w_v = np.zeros((d_model, d_model))
    for h in range(n_heads):
        w_v[np.arange(n), h * d_head + np.arange(n)] = 1.0
    return mha_call(x, (w_q, w_k, w_v, np.eye(d_model)), n_heads)


def weight_triples(call: Call, out: np.ndarray) -> WeightTriples:
    """(q, k, weights) of each head of a WEIGHTS probe (see ``_weights_call``)."""
    args = [np.asarray(a, dtype=np.float64) if isinstance(a, np.ndarray) else a for a in call.args]
    x, w_q, w_k, n_heads = args[0], args[1], args[2], int(args[5])
    n, d_model = x.shape
    d_head = d_model // n_heads
    if out.shape != (n, d_model):
        return None
    triples = []
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        triples.append((w_q[:n, cols], w_k[:n, cols], out[:, h * d_head : h * d_head + n]))
    return triples


# --- trials: the visible examples and a custom input ------------------------------------------

ARGUMENTS: tuple[ArgSpec, ...] = (
    ArgSpec("X", ROLE_ARRAY, "(..., n, d_model)", 2, 4),
    ArgSpec("n_heads", ROLE_INT, "a whole number that divides d_model", 1, MAX_DIM),
    ArgSpec("W_q", ROLE_ARRAY, "optional: (d_model, d_model)", 2, 2, optional=True),
    ArgSpec("W_k", ROLE_ARRAY, "optional: (d_model, d_model)", 2, 2, optional=True),
    ArgSpec("W_v", ROLE_ARRAY, "optional: (d_model, d_model)", 2, 2, optional=True),
    ArgSpec("W_o", ROLE_ARRAY, "optional: (d_model, d_model)", 2, 2, optional=True),
    ArgSpec("mask", ROLE_MASK, 'optional: true/false, (n, n), or "causal"', optional=True),
)


def _arg(name: str) -> ArgSpec:
    return next(a for a in ARGUMENTS if a.name == name)


_CAUSAL_3 = np.tril(np.ones((3, 3), dtype=bool))
_IDENTITY_4 = np.eye(4)


def visible_examples() -> list[TrialCase]:
    labels = ("X", "W_q", "W_k", "W_v", "W_o", "n_heads")
    weights = tuple(_IDENTITY_4.copy() for _ in range(4))
    return [
        TrialCase(
            "worked-example",
            "The worked example's tokens, 2 heads",
            "X is the worked example's Q (3 tokens, d_model = 4) and every weight is the "
            "identity, so head 0 attends over columns 0-1 and head 1 over columns 2-3.",
            labels,
            (WORKED_Q.copy(), *weights, 2),
        ),
        TrialCase(
            "masked",
            "A causal mask",
            "The same, where each token attends only to itself and the tokens before it.",
            (*labels, "mask"),
            (WORKED_Q.copy(), *weights, 2, _CAUSAL_3.copy()),
        ),
        TrialCase(
            "batched",
            "A batch of two",
            "X with a leading batch dimension of 2: the worked example's tokens and its keys.",
            labels,
            (np.stack([WORKED_Q, WORKED_K]), *weights, 2),
        ),
    ]


def trial_case(spec: Mapping[str, Any], rng: np.random.Generator) -> TrialCase:
    x = _array_arg(_arg("X"), spec["X"], rng)
    d_model, n = x.shape[-1], x.shape[-2]
    n_heads = _int_value("n_heads", spec["n_heads"], 1, MAX_DIM)
    if d_model % n_heads:
        raise TrialInputError(MSG_HEADS.format(d_model=d_model, n_heads=n_heads))
    named: list[tuple[str, Arg]] = [("X", x)]
    for name in ("W_q", "W_k", "W_v", "W_o"):
        raw = spec.get(name)
        # Variance 1/d_model, as the hidden checks draw them: X·W keeps unit-variance entries.
        w = (
            np.round(rng.standard_normal((d_model, d_model)) / math.sqrt(d_model), 2)
            if raw is None
            else _array_arg(_arg(name), raw, rng, 1.0 / math.sqrt(d_model))
        )
        if w.shape != (d_model, d_model):
            raise TrialInputError(
                MSG_WEIGHT_SHAPE.format(name=name, d=d_model, shape=shape_text(w.shape))
            )
        named.append((name, w))
    named.append(("n_heads", n_heads))
    if spec.get("mask") is not None:
        mask = _mask_arg(spec["mask"], n, n)
        _check_mask(mask, (*x.shape[:-1], n))
        named.append(("mask", mask))
    return _custom_case(named)


KIND = Kind(
    name=NAME,
    reference=reference.multi_head_attention,
    reference_source=REFERENCE_SOURCE,
    wrong_implementations=WRONG_IMPLEMENTATIONS,
    diagnostic_probes=diagnostic_probes,
    arguments=ARGUMENTS,
    visible_examples=visible_examples,
    trial_case=trial_case,
    batch_copies=True,
    variant=mha_variant,
    weight_triples=weight_triples,
)
