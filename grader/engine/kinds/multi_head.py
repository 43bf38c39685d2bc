"""Multi-head attention: ``multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None)``.

No Django imports. What is particular to this kind (see ``kinds.attention`` for the layout).
"""

# ruff: noqa: RUF002, RUF003 - the pictures' text uses ×, −, – and … on purpose

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from grader.engine import pictures, reference
from grader.engine.executors.base import Arg, Call, CallResult
from grader.engine.inputs import (
    WORKED_K,
    WORKED_Q,
    causal_mask,
    mha_call,
    mha_weights,
    unit,
)
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
    catalogue_of,
    probe,
)
from grader.engine.kinds.multi_head_mistakes import (
    mha_divide_by_8,
    mha_global_max,
    mha_interleaved_heads,
    mha_mask_ignored,
    mha_mask_inverted,
    mha_mask_tiled_for_heads,
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
from grader.engine.trial_args import (
    MAX_DIM,
    MSG_HEADS,
    MSG_WEIGHT_SHAPE,
    ROLE_ARRAY,
    ROLE_INT,
    ROLE_MASK,
    ArgSpec,
    TrialCase,
    TrialInputError,
    array_arg,
    check_mask,
    custom_case,
    int_value,
    mask_arg,
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


_wrong = catalogue_of(NAME)


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
    # Right with batch axes and in 2-D with a mask; a mask broadcast over the batch raises.
    _wrong("mask-shape-exact", mha_mask_tiled_for_heads, _BATCH),
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
    probes += batched(probes, 1)
    # Three unrelated sequences: code that folds the batch into the sequence axis mixes them
    # here, where the copies above (whose tokens repeat across the batch) hide it.
    probes.append(
        DiagnosticProbe(
            mha_call(unit(rng, (3, 5, 16)), mha_weights(rng, 16), 4), frozenset({BATCH}), form=1
        )
    )
    return probes


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


# --- the common checks' inputs (checks.common) -------------------------------------------------

PARAMETERS = ("X", "W_q", "W_k", "W_v", "W_o", "n_heads", "mask")


def stability_call(rng: np.random.Generator, size: float, dtype: type) -> tuple[Call, str]:
    d_model, n_heads = 32, 4
    x = (unit(rng, (5, d_model)) * np.sqrt(size)).astype(dtype)
    # X·W keeps the std of X, so per-head scaled scores have std about `size`.
    weights = tuple(w.astype(dtype) for w in mha_weights(rng, d_model))
    return mha_call(x, weights, n_heads), f"inputs with per-head scores of magnitude about {size:g}"


def no_mutation_call(rng: np.random.Generator) -> tuple[Call, str]:
    d_model, n_heads, n = 16, 4, 5
    call = mha_call(
        unit(rng, (n, d_model)),
        mha_weights(rng, d_model),
        n_heads,
        np.tril(np.ones((n, n), dtype=bool)),
        return_inputs=True,
    )
    return call, f"random X (d_model = {d_model}, {n_heads} heads) with a mask"


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
    x = array_arg(_arg("X"), spec["X"], rng)
    d_model, n = x.shape[-1], x.shape[-2]
    n_heads = int_value("n_heads", spec["n_heads"], 1, MAX_DIM)
    if d_model % n_heads:
        raise TrialInputError(MSG_HEADS.format(d_model=d_model, n_heads=n_heads))
    named: list[tuple[str, Arg]] = [("X", x)]
    for name in ("W_q", "W_k", "W_v", "W_o"):
        raw = spec.get(name)
        # Variance 1/d_model, as the hidden checks draw them: X·W keeps unit-variance entries.
        w = (
            np.round(rng.standard_normal((d_model, d_model)) / math.sqrt(d_model), 2)
            if raw is None
            else array_arg(_arg(name), raw, rng, 1.0 / math.sqrt(d_model))
        )
        if w.shape != (d_model, d_model):
            raise TrialInputError(
                MSG_WEIGHT_SHAPE.format(name=name, d=d_model, shape=shape_text(w.shape))
            )
        named.append((name, w))
    named.append(("n_heads", n_heads))
    if spec.get("mask") is not None:
        mask = mask_arg(spec["mask"], n, n)
        check_mask(mask, (*x.shape[:-1], n))
        named.append(("mask", mask))
    return custom_case(named)


# --- pictures: each head's weights beside the reference's --------------------------------------

# 8 heads as in the grader's d_model = 512 check; the sweep stops at d_head = 64 (d_model = 512)
# to keep the weight matrices that cross the sandbox small.
MH_HEADS = 8
MH_EXAMPLE_TOKENS = 6
MH_EXAMPLE_DHEAD = 8
MH_SWEEP_DHEAD: tuple[int, ...] = (8, 16, 32, 64)
MH_SWEEP_TOKENS = 8

PICTURES = frozenset(pictures.PICTURES) - {"unstable-softmax"}


@functools.cache
def _plot_inputs(
    stream: int, n_tokens: int, d_head: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """X, W_q, W_k, W_v, W_o such that the output's head-h block holds head h's weights.

    X's rows are the first ``n_tokens`` unit vectors, so X·W = the first rows of W: Q and K
    get unit-variance entries from W_q, W_k ~ N(0, 1). W_v makes every head's values the
    identity (padded with zero columns) and W_o = I, so columns h·d_head … h·d_head + n − 1
    of the output are head h's attention weights.
    """
    d_model = MH_HEADS * d_head
    rng = pictures.plot_rng(stream)
    X = np.eye(n_tokens, d_model)
    W_q = rng.standard_normal((d_model, d_model))
    W_k = rng.standard_normal((d_model, d_model))
    W_v = np.zeros((d_model, d_model))
    for h in range(MH_HEADS):
        W_v[np.arange(n_tokens), h * d_head + np.arange(n_tokens)] = 1.0
    W_o = np.eye(d_model)
    pictures.frozen(X, W_q, W_k, W_v, W_o)
    return X, W_q, W_k, W_v, W_o


def _reference_weights(X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, d_head: int) -> np.ndarray:
    """(heads, n, n): each head's softmax(Q_h K_hᵀ / √d_head)."""
    Q, K = X @ W_q, X @ W_k
    return np.stack(
        [
            reference.attention_weights(
                Q[:, h * d_head : (h + 1) * d_head], K[:, h * d_head : (h + 1) * d_head]
            )
            for h in range(MH_HEADS)
        ]
    )


def _student_weights(output: np.ndarray, n_tokens: int, d_head: int) -> np.ndarray:
    """(heads, n, n) read back from the (n, d_model) output of the padded-identity call."""
    return np.stack([output[:, h * d_head : h * d_head + n_tokens] for h in range(MH_HEADS)])


def _sweep_reference(d_head: int) -> np.ndarray:
    X, W_q, W_k, _, _ = _plot_inputs(100 + d_head, MH_SWEEP_TOKENS, d_head)
    return _reference_weights(X, W_q, W_k, d_head)


def plot_calls() -> tuple[Call, ...]:
    """The example (stream 1), then the d_head sweep (stream 100 + d_head)."""
    calls = [Call(args=(*_plot_inputs(1, MH_EXAMPLE_TOKENS, MH_EXAMPLE_DHEAD), MH_HEADS))]
    for d_head in MH_SWEEP_DHEAD:
        inputs = _plot_inputs(100 + d_head, MH_SWEEP_TOKENS, d_head)
        calls.append(Call(args=(*inputs, MH_HEADS)))
    return tuple(calls)


def plots_of(results: Sequence[CallResult]) -> dict[str, Any]:
    n, d_head = MH_EXAMPLE_TOKENS, MH_EXAMPLE_DHEAD
    X, W_q, W_k, _, _ = _plot_inputs(1, n, d_head)
    ref = _reference_weights(X, W_q, W_k, d_head)
    out, error = pictures.student_array(results, 0, (n, MH_HEADS * d_head))
    student = _student_weights(out, n, d_head)[0] if out is not None else None
    example = pictures.example_dict(
        student,
        ref[0],
        error,
        title=f"Head 1 of {MH_HEADS}: attention weights of {n} tokens, d_head = {d_head} "
        f"(d_model = {MH_HEADS * d_head})",
        note="Inputs made for this picture (not a hidden input): one-hot tokens and random "
        "W_q, W_k; W_v and W_o chosen so the output holds each head's weights.",
        rows=pictures.labels("t", n),
        cols=pictures.labels("t", n),
        d_k=d_head,
    )
    m = MH_SWEEP_TOKENS
    saturation = pictures.saturation_sweep(
        results,
        label="d_head",
        sizes=MH_SWEEP_DHEAD,
        reference_of=_sweep_reference,
        shape_of=lambda dh: (m, MH_HEADS * dh),
        weights_of=lambda out, dh: _student_weights(out, m, dh),
        queries=m * MH_HEADS,
        keys=m,
        col_prefix="t",
    )
    return {"example": example, "saturation": saturation}


KIND = Kind(
    name=NAME,
    reference=reference.multi_head_attention,
    reference_source=REFERENCE_SOURCE,
    wrong_implementations=WRONG_IMPLEMENTATIONS,
    diagnostic_probes=diagnostic_probes,
    arguments=ARGUMENTS,
    visible_examples=visible_examples,
    trial_case=trial_case,
    plot_calls=plot_calls,
    plots=plots_of,
    pictures=PICTURES,
    values_check="mha-values",
    parameters=PARAMETERS,
    stability_call=stability_call,
    no_mutation_call=no_mutation_call,
    batch_copies=True,
    variant=mha_variant,
    weight_triples=weight_triples,
)
