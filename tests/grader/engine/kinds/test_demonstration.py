"""Tests of grader/engine/kinds/demonstration.py: the ten-minute demonstration's own content,
its checks (grader/engine/checks/demonstration.py) and its two misconceptions' figures."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grader.engine import reference
from grader.engine.checks import check_get
from grader.engine.executors.base import CallResult
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.exercise_content import EXERCISES
from grader.engine.grading import grade
from grader.engine.inputs import DEMO_LARGE_D_K, DEMO_LARGE_N, DEMO_OVERFLOW_SEEDS
from grader.engine.kinds import demonstration
from grader.engine.kinds.base import LARGE, PLAIN
from grader.engine.kinds.demonstration_mistakes import (
    demo_divides_by_d,
    demo_k_before_q,
    demo_never_divides,
    demo_unstable_softmax,
)
from grader.engine.messages import DEMO_NOT_SATURATED, DEMO_SCALED_SPREAD
from grader.engine.misconception_figures import misconception_figure
from grader.engine.plots import plot_calls, plots_from_results
from grader.engine.status import VerdictStatus
from grader.engine.trial_args import TrialInputError
from tests.grader.helpers import builtin_spec
from tests.grader.variants import demo_loops, demo_one_draw

KIND = demonstration.KIND
NAME = reference.KIND_DEMONSTRATION


def _by_hand(d_k: int, seed: int, n: int = 16) -> tuple[float, float, float, float]:
    """The contract, written out independently of the reference."""
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    S = Q @ K.T
    row, row_scaled = S[0], S[0] / math.sqrt(d_k)
    w = np.exp(row - row.max()) / np.exp(row - row.max()).sum()
    ws = np.exp(row_scaled - row_scaled.max()) / np.exp(row_scaled - row_scaled.max()).sum()
    return S.max(), S.max() / math.sqrt(d_k), w.max(), ws.max()


@pytest.mark.parametrize(("d_k", "seed", "n"), [(64, 0, 16), (4, 3, 5), (1024, 1, 8), (1, 9, 2)])
def test_the_reference_follows_the_contract(d_k, seed, n):
    np.testing.assert_allclose(
        reference.scaling_demonstration(d_k, seed, n), _by_hand(d_k, seed, n), rtol=1e-12
    )


def test_the_statement_quotes_the_d_k_64_numbers():
    raw, scaled, top_raw, top_scaled = reference.scaling_demonstration(64, 0)
    quoted = f"({raw:.2f}, {scaled:.2f}, {top_raw:.3f}, {top_scaled:.3f})"
    assert quoted == "(20.03, 2.50, 0.871, 0.199)"
    statement = next(e for e in EXERCISES if e["kind"] == NAME)["statement"]
    assert quoted in statement
    assert quoted in KIND.visible_examples()[0].about


def test_a_single_draw_of_shape_2_n_d_k_is_q_then_k():
    # The statement allows it: the generator fills the array in order.
    np.testing.assert_allclose(demo_one_draw(32, 5, 7), reference.scaling_demonstration(32, 5, 7))
    np.testing.assert_allclose(demo_loops(8, 5, 7), reference.scaling_demonstration(8, 5, 7))


def test_k_drawn_first_keeps_the_score_maxima_but_not_row_0():
    wrong = np.asarray(demo_k_before_q(64, 2))
    right = reference.scaling_demonstration(64, 2)
    np.testing.assert_allclose(wrong[:2], right[:2])  # K first transposes S: same maxima
    assert not np.allclose(wrong[2:], right[2:])


def test_the_large_probes_overflow_an_unguarded_exp_and_not_the_reference():
    for seed in DEMO_OVERFLOW_SEEDS:
        rng = np.random.default_rng(seed)
        Q = rng.standard_normal((DEMO_LARGE_N, DEMO_LARGE_D_K))
        K = rng.standard_normal((DEMO_LARGE_N, DEMO_LARGE_D_K))
        assert (Q @ K.T)[0].max() > math.log(np.finfo(np.float64).max)
        assert np.all(np.isfinite(reference.scaling_demonstration(DEMO_LARGE_D_K, seed, 4)))
        with np.errstate(all="ignore"):
            assert np.isnan(demo_unstable_softmax(DEMO_LARGE_D_K, seed, 4)[2])
    probes = KIND.diagnostic_probes(np.random.default_rng(0))
    assert {p.call.args[0] for p in probes if LARGE in p.tags} == {DEMO_LARGE_D_K}
    assert any(len(p.call.args) == 2 for p in probes if PLAIN in p.tags)  # the default n


def test_no_pairs_no_scale_no_axis_argument():
    assert KIND.variant is None and KIND.weight_triples is None and KIND.other_axes is None
    assert KIND.parameters == ("d_k", "rng_seed", "n") and KIND.batch_copies is False


def test_a_custom_input_is_whole_numbers_in_range():
    case = KIND.trial_case({"d_k": 64, "rng_seed": 3, "n": 5}, np.random.default_rng(0))
    assert case.args == (64, 3, 5)
    case = KIND.trial_case({"d_k": 8}, np.random.default_rng(0))
    assert case.args == (8, 0)
    for bad in ({"d_k": 0}, {"d_k": 5000}, {"d_k": 4, "n": 65}, {"d_k": 2.5}):
        with pytest.raises(TrialInputError):
            KIND.trial_case(bad, np.random.default_rng(0))


def _run(func, probes):
    calls = [getattr(p, "call", p) for p in probes]  # check probes, or the pictures' calls
    return [CallResult(output=np.asarray(func(*c.args), dtype=np.float64)) for c in calls]


def test_the_trend_check_passes_the_reference_and_names_what_breaks_it():
    check = check_get("demo-trend")
    params = check.clean_params(None)
    probes = check.prepare(params, np.random.default_rng(0), NAME)
    assert check.judge(params, probes, _run(reference.scaling_demonstration, probes), NAME).passed
    outs = np.stack([reference.scaling_demonstration(*p.call.args) for p in probes])
    from grader.engine.checks.demonstration import trend_outcome

    by_d = outs.copy()
    by_d[:, 1] = np.stack([demo_divides_by_d(*p.call.args) for p in probes])[:, 1]
    outcome = trend_outcome(params, by_d)
    assert not outcome.passed
    assert outcome.message.startswith(DEMO_SCALED_SPREAD.split("{")[0])
    flat = outs.copy()
    flat[:, 2] = 0.5  # an unscaled top weight that never saturates
    assert trend_outcome(params, flat).message.startswith(DEMO_NOT_SATURATED.split("{")[0])


def test_the_trend_holds_for_the_reference_over_many_draws():
    check = check_get("demo-trend")
    params = check.clean_params(None)
    for seed in range(5):
        probes = check.prepare(params, np.random.default_rng(100 + seed), NAME)
        outs = np.stack([reference.scaling_demonstration(*p.call.args) for p in probes])
        from grader.engine.checks.demonstration import trend_outcome

        assert trend_outcome(params, outs).passed


@pytest.mark.parametrize("func", [demo_one_draw, reference.scaling_demonstration])
def test_correct_versions_pass_every_check(func):
    verdict = grade(spec=builtin_spec(NAME), code="", seed=3, executor=CallableExecutor(func))
    assert verdict.status == VerdictStatus.PASSED, verdict.to_dict()


def test_never_dividing_is_named_missing_scale():
    verdict = grade(
        spec=builtin_spec(NAME), code="", seed=0, executor=CallableExecutor(demo_never_divides)
    )
    assert verdict.status == VerdictStatus.FAILED
    assert list(verdict.diagnosis) == ["missing-scale"]


def test_the_picture_is_the_scaled_top_weight_across_head_sizes():
    calls = plot_calls(NAME)
    assert len(calls) == len(demonstration.SWEEP_DK) * demonstration.SWEEP_DRAWS
    right = plots_from_results(NAME, _run(reference.scaling_demonstration, calls))
    sat = right["saturation"]
    assert right["example"] is None and sat["error"] is None
    assert sat["student"] == sat["reference"] and sat["d_k"] == list(demonstration.SWEEP_DK)
    assert all(0.15 < v < 0.5 for v in sat["reference"])  # flat: the division keeps the spread
    unscaled = plots_from_results(NAME, _run(demo_never_divides, calls))["saturation"]["student"]
    assert unscaled[-1] > 0.9 and unscaled[-1] > unscaled[0]  # climbs towards one key
    cut = plots_from_results(NAME, _run(reference.scaling_demonstration, calls)[:3])
    assert cut["saturation"]["student"][0] is None and cut["saturation"]["error"]


def test_the_two_figures_quote_what_the_draws_give():
    draws = dict(misconception_figure("demo-draws").rows)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((16, 64))
    k = rng.standard_normal((16, 64))
    legacy = np.random.RandomState(0).randn(16, 64)
    assert list(draws.values()) == [", ".join(f"{v:.3f}" for v in a[0, :3]) for a in (q, k, legacy)]
    rows = dict(misconception_figure("demo-wrong-row").rows)
    S = q @ k.T / 8.0
    w = np.exp(S - S.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    assert rows == {
        "row 0": f"{w[0].max():.3f}",
        "the last row": f"{w[-1].max():.3f}",
        "the largest weight of any row": f"{w.max():.3f}",
    }
    assert rows["row 0"] == f"{reference.scaling_demonstration(64, 0)[3]:.3f}"
