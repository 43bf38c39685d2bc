"""Every number a misconception's section quotes, recomputed independently of the figure module."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grader.engine import misconception_figures as F
from grader.engine.figure_parts import BAR_HEIGHT
from grader.engine.misconceptions import CODES, MISCONCEPTIONS, misconceptions_catalogue


def rows(code: str) -> dict[str, str]:
    """The figure's rows, keyed as the source writes them (d_k; the page shows dₖ)."""
    figure = F.misconception_figure(code)
    assert figure is not None
    return {what.replace("dₖ", "d_k").replace("dᵥ", "d_v"): v for what, v in figure.rows}


def test_figures_write_sizes_as_math() -> None:
    for code in F.FIGURE_CODES:
        figure = F.misconception_figure(code)
        text = figure.caption + " ".join(what for what, _ in figure.rows)
        text += " ".join(chart.name for chart in figure.charts)
        assert "d_k" not in text and "d_v" not in text, code
    assert "√dₖ" in F.misconception_figure("scale-by-d").rows[0][0]


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def mean_top(d: int, divisor: float, trials: int = 2000, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((trials, 1, d))
    k = rng.standard_normal((trials, 8, d))
    return float(softmax((q * k).sum(-1) / divisor).max(-1).mean())


def test_every_code_has_a_figure_and_every_figure_a_code() -> None:
    assert set(F.FIGURE_CODES) == set(CODES)
    for entry in misconceptions_catalogue():
        assert entry["figure"] is not None and entry["figure"].rows, entry["code"]
    assert F.misconception_figure("no-such-code") is None


def test_missing_scale_top_weight_at_256_unscaled_vs_scaled() -> None:
    r = rows("missing-scale")
    assert r["typical size of a raw score (its standard deviation)"] == "16.0"  # √256
    # The theory's picture within sampling noise, and this seed's numbers exactly.
    assert mean_top(256, 1) > 0.9 and mean_top(256, 16) < 0.45
    assert r["mean top weight without the division"] == f"{100 * mean_top(256, 1):.0f}%" == "93%"
    assert r["mean top weight divided by √256 = 16"] == f"{100 * mean_top(256, 16):.0f}%" == "36%"


def test_missing_scale_links_to_the_demonstration() -> None:
    figure = F.misconception_figure("missing-scale")
    assert "/explainer/#demonstration" in dict(figure.links).values()
    assert F.misconception_links("missing-scale") == figure.links
    charts = figure.charts
    assert len(charts) == 2 and all(len(c.bars) == 8 for c in charts)
    # Bars are drawn to scale: heights are the weights times the chart height, summing to it.
    for chart in charts:
        assert sum(b.height for b in chart.bars) == pytest.approx(BAR_HEIGHT, abs=0.5)


@pytest.mark.parametrize(("d", "quoted"), [(16, "0.247"), (64, "0.125"), (256, "0.063")])
def test_scale_by_d_spread_is_one_over_root_d(d: int, quoted: str) -> None:
    key = f"spread of the scores at d_k = {d}, ÷ d_k (theory 1/√d_k = {1 / math.sqrt(d):.4g})"
    assert rows("scale-by-d")[key] == quoted
    assert float(quoted) == pytest.approx(1 / math.sqrt(d), rel=0.03)


def test_scale_by_d_is_nearly_uniform() -> None:
    quoted = rows("scale-by-d")["mean top weight at d_k = 256 (uniform: 1/8 = 12.5%)"]
    assert quoted == f"{100 * mean_top(256, 256):.0f}%" == "14%"


def test_scale_values_and_after_softmax_leave_the_raw_peak() -> None:
    r = rows("scale-values")
    assert r["mean top weight with V divided by 8"] == f"{100 * mean_top(64, 1):.0f}%" == "87%"
    assert r["mean top weight with the scores divided by 8 (right)"] == "36%"
    r = rows("scale-after-softmax")
    assert r["each row's sum after the division"] == f"{1 / 8:.3f}"
    assert r["mean share of the top key, softmax then ÷ 8"] == "87%"
    assert r["mean top weight, ÷ 8 then softmax (right)"] == "36%"


@pytest.mark.parametrize(("d", "quoted"), [(16, "0.49"), (64, "1.00"), (256, "2.00")])
def test_hardcoded_scale_spread(d: int, quoted: str) -> None:
    assert rows("hardcoded-scale")[f"d_k = {d}, ÷ 8"] == quoted
    assert float(quoted) == pytest.approx(math.sqrt(d) / 8, rel=0.03)


def test_wrong_dimension_and_model_width_spreads() -> None:
    r = rows("wrong-dimension")
    assert float(r["÷ √d_k = 8 (right)"]) == pytest.approx(1, abs=0.02)
    assert float(r["÷ √d_v = 4"]) == pytest.approx(8 / 4, rel=0.03)
    assert float(r["÷ √n = 3.16"]) == pytest.approx(8 / math.sqrt(10), rel=0.03)
    r = rows("scale-by-model-width")
    assert float(r["÷ √d_model = 22.6"]) == pytest.approx(8 / math.sqrt(512), rel=0.03)
    assert f"{math.sqrt(512):.1f}" == "22.6"


def test_unstable_softmax_thresholds() -> None:
    r = rows("unstable-softmax")
    assert r["largest x with exp(x) finite, float64"] == "709.78"
    assert r["largest x with exp(x) finite, float32"] == "88.72"
    with np.errstate(over="ignore"):
        assert math.isfinite(math.exp(709.78)) and np.isinf(np.exp(np.float64(709.79)))
        assert np.isfinite(np.exp(np.float32(88.72))) and np.isinf(np.exp(np.float32(88.73)))
    assert r["naive softmax of [1000, 999]"] == "nan, nan"
    assert r["after subtracting the max"] == "0.731, 0.269"
    assert round(1 / (1 + math.exp(-1)), 3) == 0.731
    # The explanation's "about 709 (88 in float32)" are these limits, truncated.
    text = MISCONCEPTIONS["unstable-softmax"].explanation
    assert "709" in text and "88 in float32" in text


def test_small_examples() -> None:
    e = [math.exp(x) for x in (1.0, 0.0, 0.5)]
    assert rows("unnormalized-weights") == {
        "exp of the scores": "2.718, 1.000, 1.649",
        "their sum": f"{sum(e):.3f}",
        "divided by the sum": "0.506, 0.186, 0.307",
    }
    assert rows("mask-ignored")["weight on the masked key, mask ignored"] == "0.307"
    assert rows("mask-inverted")["weights, mask read right"] == "0.731, 0.269, 0.000"
    assert rows("mask-wrong-fill")["weight on the masked key, filled with 0"] == (
        f"{1 / (math.e + 1 + 1):.3f}"
    )
    assert rows("softmax-wrong-axis")["row sums with axis=0"] == "1.50, 1.50"
    assert rows("wrong-head-split")["reshape to (n, d_head, n_heads)"] == "0, 2, 4, 6"
    assert rows("rounded-output")["most rounding to 4 decimals can change"] == "5.0e-05"
    assert float(rows("rounded-output")["largest difference after np.round(out, 4)"]) <= 5e-5
    assert rows("batch-transpose")["K.T"] == "(4, 5, 2)"
    assert rows("batch-np-dot")["np.dot(a, b)"] == "(2, 3, 2, 4)"
    assert rows("mutates-input")["the caller's Q after it"] == "[1.0, 0.5]"


def _softmax_row(scores: list[float]) -> list[float]:
    e = [math.exp(s) for s in scores]
    return [x / sum(e) for x in e]


def test_softmax_backward_figures_with_g_all_ones() -> None:
    p = _softmax_row([1.0, 0.0, 0.5])
    r = rows("backward-diagonal-only")
    assert r["p"] == "0.506, 0.186, 0.307"
    assert r["p * (g − Σ g·p) (right)"] == "0.000, 0.000, 0.000"  # noqa: RUF001
    assert r["g * p * (1 − p), the diagonal only"] == ", ".join(  # noqa: RUF001
        f"{x * (1 - x):.3f}" for x in p
    )
    flipped = [x * (1 + sum(p)) for x in p]  # g + Σ g·p = 1 + 1 = 2
    r = rows("backward-sign-flipped")
    assert r["p * (g + Σ g·p)"] == ", ".join(f"{x:.3f}" for x in flipped)
    assert r["its sum (the right one sums to 0)"] == "2.000"


def test_softmax_backward_figures_of_axes_and_a_stacked_jacobian() -> None:
    p = [_softmax_row([1.0, 0.0, 0.5]), _softmax_row([0.0, 1.0, 0.5])]
    g = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    # Σ along axis=0: one sum per column, shared by both rows.
    column = [sum(p[r][j] * g[r][j] for r in range(2)) for j in range(3)]
    sums = [sum(p[r][j] * (g[r][j] - column[j]) for j in range(3)) for r in range(2)]
    r = rows("backward-wrong-axis")
    assert r["row sums, Σ along axis=0"] == ", ".join(f"{x:.3f}" for x in sums)
    assert r["row sums of the gradient, Σ along axis=-1 (right)"] == "0.000, 0.000"
    r = rows("backward-jacobian-batch")
    assert r["J.T"] == "(3, 3, 2)" and r["J.T @ g[..., None]"] == "ValueError"
    assert r["each row's J equals its transpose"] == "yes"


def test_softmax_backward_figures_of_softmax_again_and_the_vanishing_gradient() -> None:
    p = _softmax_row([1.0, 0.0, 0.5])
    assert rows("backward-softmax-again")["softmax(p)"] == ", ".join(
        f"{x:.3f}" for x in _softmax_row(p)
    )

    def largest(scale: float, clip: float = 0.0) -> float:
        q = _softmax_row([s * scale for s in (0.75, 1.74, 0.5, 0.06, 0.16)])
        q = [min(max(x, clip), 1 - clip) for x in q] if clip else q
        return max(abs(a * ((i == j) - b)) for i, a in enumerate(q) for j, b in enumerate(q))

    r = rows("backward-vanishing-hidden")
    # The explainer's figure quotes 0.25, 0.027 and 5.4e-5 for these scores.
    assert r["at ×1"] == f"{largest(1):.3f}" == "0.250"  # noqa: RUF001
    assert r["at ×4"] == f"{largest(4):.3f}" == "0.027"  # noqa: RUF001
    assert r["at ×10"] == f"{largest(10):.1e}" == "5.4e-05"  # noqa: RUF001
    assert r["at ×80"] == f"{largest(80):.1e}"  # noqa: RUF001
    assert r["at ×80, p clipped to [1e-7, 1 − 1e-7]"] == "1.0e-07"  # noqa: RUF001


# The attention backward's figures: the worked example (Q and K of the question's seed), V = K.
WORKED_Q = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 1, 0]], dtype=float)
WORKED_K = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]], dtype=float)


def attention_ds(Q: np.ndarray, K: np.ndarray, dP: np.ndarray, mask=None) -> np.ndarray:
    """dS one row at a time through the row's Jacobian, written out."""
    S = Q @ K.T / math.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = softmax(S)
    return np.stack([(np.diag(p) - np.outer(p, p)) @ g for p, g in zip(P, dP, strict=True)])


def test_attention_backward_figure_of_the_dropped_scale() -> None:
    dO = np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))
    dS = attention_ds(WORKED_Q, WORKED_K, dO @ WORKED_K.T)
    dQ0 = dS[0] @ WORKED_K / 2.0
    r = rows("backward-scale-dropped")
    assert r["dQ[0] with the 1/√d_k"] == ", ".join(f"{x:.3f}" for x in dQ0)
    assert r["dQ[0] without it"] == ", ".join(f"{x:.3f}" for x in 2 * dQ0)
    assert r["ratio, every entry"] == "2 = √4"


def test_attention_backward_figures_of_the_softmax_as_a_constant_and_the_transpose() -> None:
    r = rows("backward-softmax-constant")
    assert r["dS = P * (dP - sum(dP * P)) (right)"] == "0.000, 0.000, 0.000"
    assert r["dS = dP (softmax as a constant)"] == "1.000, 1.000, 1.000"
    r = rows("backward-transpose")
    assert r == {"Pᵀ @ dO (right)": "(3, 4)", "P @ dO": "ValueError"}


def test_attention_backward_figure_of_the_mask_leak() -> None:
    mask = np.tril(np.ones((3, 3), dtype=bool))
    dP = np.tile([1.0, 0.0, 0.0, 0.0], (3, 1)) @ WORKED_K.T
    leak = attention_ds(WORKED_Q, WORKED_K, dP)[~mask]
    r = rows("backward-mask-leak")
    assert r["from the forward's masked P (right)"] == "0.000, 0.000, 0.000"
    assert np.all(attention_ds(WORKED_Q, WORKED_K, dP, mask)[~mask] == 0.0)
    assert r["from P recomputed without the mask"] == ", ".join(f"{x:.3f}" for x in leak)
