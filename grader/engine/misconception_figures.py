"""A computed number (and, where it helps, a tiny bar chart) for each misconception's section.

No Django imports. Every figure is computed here, by trusted code, from a fixed seed or a fixed
example, so the page never quotes a number the code does not produce; tests/grader/
test_misconception_figures.py recomputes each quoted number independently.
"""

# ruff: noqa: RUF003 - the figures write × and − as math

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache

import numpy as np

from grader.engine import backward_figures
from grader.engine.figure_parts import (
    GRID,
    ROW,
    Figure,
    bar_chart,
    numbers,
    pct,
    softmax,
)
from grader.engine.messages import as_math

SEED = 0
N_KEYS = 8
N_QUERIES = 2000  # mean top weights: enough queries that the third digit is stable
BIG_D = 256
DEMO_SEED = 0  # the demonstration exercise's first visible example
FLOAT64_EXP_LIMIT = math.log(np.finfo(np.float64).max)  # 709.78: exp() of more is inf
FLOAT32_EXP_LIMIT = math.log(float(np.finfo(np.float32).max))  # 88.72


# Where a code's section sends the reader next (also shown in the verdict).
_LINKS: dict[str, tuple[tuple[str, str], ...]] = {
    "missing-scale": (
        (
            "Watch training stall without the division: the live demonstration",
            "/explainer/#demonstration",
        ),
    ),
}


def misconception_links(code: str) -> tuple[tuple[str, str], ...]:
    """(text, internal URL) pairs: cheap, unlike the figure, so a verdict can show them."""
    return _LINKS.get(code, ())


def _scores(d: int, n_queries: int = N_QUERIES, seed: int = SEED) -> np.ndarray:
    """Raw scores q·k of `n_queries` queries against N_KEYS keys, unit-variance entries."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_queries, 1, d))
    k = rng.standard_normal((n_queries, N_KEYS, d))
    return (q * k).sum(axis=-1)


def mean_top_weight(d: int, divisor: float, seed: int = SEED) -> float:
    return float(softmax(_scores(d, seed=seed) / divisor).max(axis=-1).mean())


def score_std(d: int, divisor: float, seed: int = SEED) -> float:
    return float((_scores(d, seed=seed) / divisor).std())


def _one_query(d: int) -> np.ndarray:
    return _scores(d, n_queries=1)[0]


def _missing_scale() -> Figure:
    raw, scaled = mean_top_weight(BIG_D, 1.0), mean_top_weight(BIG_D, math.sqrt(BIG_D))
    one = _one_query(BIG_D)
    return Figure(
        f"At d_k = {BIG_D}, one query against {N_KEYS} keys (mean over {N_QUERIES:,} queries).",
        (
            ("typical size of a raw score (its standard deviation)", f"{score_std(BIG_D, 1):.1f}"),
            ("mean top weight without the division", pct(raw)),
            (f"mean top weight divided by √{BIG_D} = 16", pct(scaled)),
        ),
        (
            bar_chart("one query, raw scores", softmax(one)),
            bar_chart("the same query, scores ÷ 16", softmax(one / math.sqrt(BIG_D))),
        ),
        misconception_links("missing-scale"),
    )


def _scale_by_d() -> Figure:
    rows = tuple(
        (
            f"spread of the scores at d_k = {d}, ÷ d_k (theory 1/√d_k = {1 / math.sqrt(d):.4g})",
            f"{score_std(d, d):.3f}",
        )
        for d in (16, 64, 256)
    )
    top = mean_top_weight(BIG_D, BIG_D)
    return Figure(
        "Divided by d_k the spread shrinks as 1/√d_k, and the weights flatten towards uniform.",
        (*rows, (f"mean top weight at d_k = {BIG_D} (uniform: 1/{N_KEYS} = 12.5%)", pct(top))),
        (bar_chart(f"one query at d_k = {BIG_D}, ÷ d_k", softmax(_one_query(BIG_D) / BIG_D)),),
    )


def _scale_values() -> Figure:
    wrong, right = mean_top_weight(64, 1.0), mean_top_weight(64, 8.0)
    return Figure(
        f"At d_k = 64 (mean over {N_QUERIES:,} queries against {N_KEYS} keys): scaling V leaves "
        "the weights those of the raw scores.",
        (
            ("mean top weight with V divided by 8", pct(wrong)),
            ("mean top weight with the scores divided by 8 (right)", pct(right)),
        ),
    )


def _hardcoded_scale() -> Figure:
    return Figure(
        "Dividing by 8 is √d_k only at d_k = 64: the spread of the scores at other sizes.",
        tuple((f"d_k = {d}, ÷ 8", f"{score_std(d, 8):.2f}") for d in (16, 64, 256)),
    )


def _wrong_dimension() -> Figure:
    d_k, d_v, n = 64, 16, 10
    return Figure(
        f"d_k = {d_k}, d_v = {d_v}, {n} tokens: the spread of the scores after each division.",
        (
            (f"÷ √d_k = {math.sqrt(d_k):g} (right)", f"{score_std(d_k, math.sqrt(d_k)):.2f}"),
            (f"÷ √d_v = {math.sqrt(d_v):g}", f"{score_std(d_k, math.sqrt(d_v)):.2f}"),
            (f"÷ √n = {math.sqrt(n):.2f}", f"{score_std(d_k, math.sqrt(n)):.2f}"),
        ),
    )


def _scale_by_model_width() -> Figure:
    d_model, heads = 512, 8
    d_head = d_model // heads
    return Figure(
        f"d_model = {d_model}, {heads} heads, so d_head = {d_head}: the spread of one head's "
        "scores.",
        (
            (
                f"÷ √d_head = {math.sqrt(d_head):g} (right)",
                f"{score_std(d_head, math.sqrt(d_head)):.2f}",
            ),
            (
                f"÷ √d_model = {math.sqrt(d_model):.1f}",
                f"{score_std(d_head, math.sqrt(d_model)):.2f}",
            ),
        ),
    )


def _scale_after_softmax() -> Figure:
    w = softmax(_scores(64))
    after = w / 8
    return Figure(
        f"At d_k = 64 (mean over {N_QUERIES:,} queries against {N_KEYS} keys): dividing the "
        "weights by 8 after the softmax.",
        (
            ("each row's sum after the division", f"{after.sum(-1).mean():.3f}"),
            (
                "mean share of the top key, softmax then ÷ 8",
                pct(float((after.max(-1) / after.sum(-1)).mean())),
            ),
            ("mean top weight, ÷ 8 then softmax (right)", pct(mean_top_weight(64, 8.0))),
        ),
    )


def _softmax_wrong_axis() -> Figure:
    wrong = softmax(GRID, axis=0)
    return Figure(
        "Two queries, three keys: softmax down the columns instead of along each row.",
        (
            (
                "row sums with axis=-1 (right)",
                ", ".join(f"{x:.2f}" for x in softmax(GRID).sum(-1)),
            ),
            ("row sums with axis=0", ", ".join(f"{x:.2f}" for x in wrong.sum(-1))),
        ),
    )


def _unstable_softmax() -> Figure:
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(np.array([1000.0, 999.0])) / np.exp(np.array([1000.0, 999.0])).sum()
    stable = softmax(np.array([1000.0, 999.0]))
    return Figure(
        "exp() overflows: the largest argument a float can take, and what scores [1000, 999] give.",
        (
            ("largest x with exp(x) finite, float64", f"{FLOAT64_EXP_LIMIT:.2f}"),
            ("largest x with exp(x) finite, float32", f"{FLOAT32_EXP_LIMIT:.2f}"),
            ("naive softmax of [1000, 999]", ", ".join(str(x) for x in naive)),
            ("after subtracting the max", ", ".join(f"{x:.3f}" for x in stable)),
        ),
    )


def _unnormalized_weights() -> Figure:
    e = np.exp(ROW)
    return Figure(
        "Scores [1.0, 0.0, 0.5]: exp() alone, and divided by its sum.",
        (
            ("exp of the scores", ", ".join(f"{x:.3f}" for x in e)),
            ("their sum", f"{e.sum():.3f}"),
            ("divided by the sum", ", ".join(f"{x:.3f}" for x in e / e.sum())),
        ),
    )


_MASK = np.array([True, True, False])


def _mask_ignored() -> Figure:
    return Figure(
        "Scores [1.0, 0.0, 0.5], the third key masked out.",
        (
            ("weight on the masked key, mask ignored", f"{softmax(ROW)[2]:.3f}"),
            (
                "weight on it with -inf before the softmax",
                f"{softmax(np.where(_MASK, ROW, -np.inf))[2]:g}",
            ),
        ),
    )


def _mask_inverted() -> Figure:
    right = softmax(np.where(_MASK, ROW, -np.inf))
    inverted = softmax(np.where(~_MASK, ROW, -np.inf))
    return Figure(
        "Scores [1.0, 0.0, 0.5], mask [True, True, False] (True: may attend).",
        (
            ("weights, mask read right", ", ".join(f"{x:.3f}" for x in right)),
            ("weights, mask inverted", ", ".join(f"{x:.3f}" for x in inverted)),
        ),
    )


def _mask_wrong_fill() -> Figure:
    zero = softmax(np.where(_MASK, ROW, 0.0))
    with np.errstate(invalid="ignore"):
        nan = softmax(np.where(_MASK, ROW, np.nan))
    return Figure(
        "Scores [1.0, 0.0, 0.5], the third key masked: what each fill value gives it.",
        (
            ("weight on the masked key, filled with 0", f"{zero[2]:.3f}"),
            ("weights, filled with NaN", ", ".join(str(x) for x in nan)),
            ("weight on it, filled with -inf", f"{softmax(np.where(_MASK, ROW, -np.inf))[2]:g}"),
        ),
    )


def _mask_shape_exact() -> Figure:
    scores = np.zeros((2, 3, 4))
    mask = np.ones((3, 4), dtype=bool)
    try:
        scores[~mask] = -np.inf
        indexed = str(scores.shape)
    except IndexError as e:
        indexed = type(e).__name__  # a boolean index must have the indexed array's shape
    return Figure(
        "Scores of shape (2, 3, 4) = (batch, n, m) and one mask of shape (3, 4) for both.",
        (
            ("scores[~mask] = -inf", indexed),
            (
                "np.where(mask, scores, -inf) (right)",
                str(np.where(mask, scores, -np.inf).shape),
            ),
        ),
    )


def _wrong_head_split() -> Figure:
    d_model, heads = 8, 2
    cols = np.arange(d_model)
    right = cols.reshape(heads, d_model // heads)[0]
    wrong = cols.reshape(d_model // heads, heads)[:, 0]
    return Figure(
        f"d_model = {d_model}, {heads} heads: the columns of X·W that head 0 uses.",
        (
            ("reshape to (n, n_heads, d_head) (right)", ", ".join(map(str, right))),
            ("reshape to (n, d_head, n_heads)", ", ".join(map(str, wrong))),
        ),
    )


def _weights_transposed() -> Figure:
    w = np.array([[1.0, 2.0], [0.0, 1.0]])
    x = np.array([[1.0, 1.0]])
    return Figure(
        "x = [1, 1] and W = [[1, 2], [0, 1]]: the two products differ.",
        (("x @ W (right)", str((x @ w)[0].tolist())), ("x @ W.T", str((x @ w.T)[0].tolist()))),
    )


def _missing_projections() -> Figure:
    d_model = 4
    x = np.eye(d_model)[:1]
    w_q = np.arange(d_model * d_model, dtype=float).reshape(d_model, d_model)
    return Figure(
        "Token x = [1, 0, 0, 0]: its query is x @ W_q, not x itself.",
        (
            ("x used as the query", str(x[0].tolist())),
            ("x @ W_q (W_q = 0…15)", str((x @ w_q)[0].tolist())),
        ),
    )


def _missing_output_projection() -> Figure:
    concat = np.array([[1.0, 0.0, 0.0, 1.0]])
    w_o = np.full((4, 4), 0.25)
    return Figure(
        "The heads' concatenated output [1, 0, 0, 1] with W_o = 0.25 everywhere.",
        (
            ("without W_o", str(concat[0].tolist())),
            ("concat @ W_o (right)", str((concat @ w_o)[0].tolist())),
        ),
    )


def _rounded_output() -> Figure:
    out = softmax(ROW)
    diff = float(np.abs(np.round(out, 4) - out).max())
    return Figure(
        "The worked example's weights, rounded to 4 decimals.",
        (
            ("largest difference after np.round(out, 4)", f"{diff:.1e}"),
            ("most rounding to 4 decimals can change", "5.0e-05"),
            ("tolerance of the checks", "about 1e-05"),
        ),
    )


def _mutates_input() -> Figure:
    q = np.array([8.0, 4.0])
    before = q.copy()
    q /= 8  # in place, as the misconception does
    return Figure(
        "Q = [8, 4] before and after `Q /= 8` inside the function.",
        (
            ("the caller's Q before the call", str(before.tolist())),
            ("the caller's Q after it", str(q.tolist())),
        ),
    )


def _wrong_shape() -> Figure:
    n, m, d_v = 3, 5, 2
    return Figure(
        f"{n} queries, {m} keys, d_v = {d_v}.",
        (
            ("the weights' shape (n, m)", str((n, m))),
            ("the output's shape (n, d_v) (right)", str((n, d_v))),
        ),
    )


def _batch_transpose() -> Figure:
    k = np.zeros((2, 5, 4))
    return Figure(
        "K with a batch axis, shape (2, 5, 4) = (batch, m, d_k).",
        (
            ("K.T", str(k.T.shape)),
            ("np.swapaxes(K, -1, -2) (right)", str(np.swapaxes(k, -1, -2).shape)),
        ),
    )


def _batch_np_dot() -> Figure:
    a, b = np.zeros((2, 3, 5)), np.zeros((2, 5, 4))
    return Figure(
        "Weights of shape (2, 3, 5) times V of shape (2, 5, 4).",
        (("np.dot(a, b)", str(np.dot(a, b).shape)), ("a @ b (right)", str((a @ b).shape))),
    )


def _batch_fixed_ndim() -> Figure:
    q = np.zeros((2, 3, 4))
    return Figure(
        "Q of shape (2, 3, 4) = (batch, n, d_k).",
        (("Q.shape[1]", str(q.shape[1])), ("Q.shape[-1] = d_k (right)", str(q.shape[-1]))),
    )


def _batch_unsupported() -> Figure:
    q = np.zeros((2, 3, 4))
    k = np.zeros((2, 5, 4))
    return Figure(
        "Q of shape (2, 3, 4) and K of shape (2, 5, 4): the scores' shape.",
        (("Q @ np.swapaxes(K, -1, -2)", str((q @ np.swapaxes(k, -1, -2)).shape)),),
    )


def _demo_draws() -> Figure:
    rng = np.random.default_rng(DEMO_SEED)
    q = rng.standard_normal((16, 64))
    k = rng.standard_normal((16, 64))
    legacy = np.random.RandomState(DEMO_SEED).randn(16, 64)
    return Figure(
        f"Q[0, :3] for d_k = 64, 16 tokens and seed {DEMO_SEED}, drawn three ways: only the "
        "contract's draws give the numbers anyone can reproduce.",
        (
            ("default_rng(0), Q then K (the contract)", numbers(q[0, :3])),
            ("default_rng(0), K drawn first", numbers(k[0, :3])),
            ("np.random.seed(0) and np.random.randn", numbers(legacy[0, :3])),
        ),
    )


def demo_weights(d_k: int = 64, seed: int = DEMO_SEED, n: int = 16) -> np.ndarray:
    """The scaled softmax weights of the demonstration's draws, every row."""
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    return softmax(Q @ K.T / math.sqrt(d_k))


def _demo_wrong_row() -> Figure:
    w = demo_weights()
    return Figure(
        f"d_k = 64, seed = {DEMO_SEED}, 16 tokens: the largest scaled weight of row 0 (what the "
        "contract asks for) and what other rows give.",
        (
            ("row 0", f"{w[0].max():.3f}"),
            ("the last row", f"{w[-1].max():.3f}"),
            ("the largest weight of any row", f"{w.max():.3f}"),
        ),
    )


_BUILDERS = {
    "missing-scale": _missing_scale,
    "scale-by-d": _scale_by_d,
    "scale-values": _scale_values,
    "hardcoded-scale": _hardcoded_scale,
    "wrong-dimension": _wrong_dimension,
    "scale-by-model-width": _scale_by_model_width,
    "scale-after-softmax": _scale_after_softmax,
    "softmax-wrong-axis": _softmax_wrong_axis,
    "unstable-softmax": _unstable_softmax,
    "unnormalized-weights": _unnormalized_weights,
    "mask-ignored": _mask_ignored,
    "mask-inverted": _mask_inverted,
    "mask-wrong-fill": _mask_wrong_fill,
    "mask-shape-exact": _mask_shape_exact,
    "wrong-head-split": _wrong_head_split,
    "weights-transposed": _weights_transposed,
    "missing-projections": _missing_projections,
    "missing-output-projection": _missing_output_projection,
    "backward-diagonal-only": backward_figures.backward_diagonal_only,
    "backward-sign-flipped": backward_figures.backward_sign_flipped,
    "backward-wrong-axis": backward_figures.backward_wrong_axis,
    "backward-jacobian-batch": backward_figures.backward_jacobian_batch,
    "backward-softmax-again": backward_figures.backward_softmax_again,
    "backward-vanishing-hidden": backward_figures.backward_vanishing_hidden,
    "backward-scale-dropped": backward_figures.backward_scale_dropped,
    "backward-softmax-constant": backward_figures.backward_softmax_constant,
    "backward-transpose": backward_figures.backward_transpose,
    "backward-mask-leak": backward_figures.backward_mask_leak,
    "demo-draws": _demo_draws,
    "demo-wrong-row": _demo_wrong_row,
    "rounded-output": _rounded_output,
    "mutates-input": _mutates_input,
    "wrong-shape": _wrong_shape,
    "batch-transpose": _batch_transpose,
    "batch-np-dot": _batch_np_dot,
    "batch-fixed-ndim": _batch_fixed_ndim,
    "batch-unsupported": _batch_unsupported,
}
FIGURE_CODES = tuple(_BUILDERS)


@cache  # deterministic (fixed seeds and examples), and costly for all codes: computed once
def misconception_figure(code: str) -> Figure | None:
    """The computed figure of a code's section, or None for an unknown code; its text writes
    d_k as dₖ (the page shows it as escaped text, so math is Unicode, not markup)."""
    builder = _BUILDERS.get(code)
    if builder is None:
        return None
    figure = builder()
    return replace(
        figure,
        caption=as_math(figure.caption),
        rows=tuple((as_math(what), value) for what, value in figure.rows),
        charts=tuple(replace(chart, name=as_math(chart.name)) for chart in figure.charts),
    )
