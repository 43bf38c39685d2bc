"""Tests of grader/engine/kinds/attention_backward.py and its checks
(grader/engine/checks/attention_backward.py): the attention backward kind's own content."""

# ruff: noqa: RUF001, RUF003 - the pictures' errors write × as math

from __future__ import annotations

import numpy as np
import pytest

from grader.engine import diagnosis, messages, reference
from grader.engine.checks import check_get
from grader.engine.checks.attention_backward import FD_STEP
from grader.engine.checks.base import Probe
from grader.engine.executors.base import CallResult, RunRequest
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.grading import grade
from grader.engine.inputs import WORKED_K, WORKED_Q, attention_backward_call, causal_mask
from grader.engine.kinds import attention_backward
from grader.engine.kinds.attention_backward_mistakes import (
    attention_backward_variant,
    backward_clips_p,
    backward_dot_T,
    backward_mask_boolean_index,
    backward_mask_leak,
    backward_rounded,
    backward_scale_dropped,
)
from grader.engine.kinds.base import LARGE, MASK, PLAIN
from grader.engine.plots import plot_calls, plots_from_results
from grader.engine.status import VerdictStatus
from grader.engine.trial_args import MSG_BACKWARD_SHAPES, TrialInputError
from tests.grader.helpers import builtin_spec
from tests.grader.variants import attention_backward_einsum, attention_backward_row_jacobians

KIND = attention_backward.KIND
NAME = reference.KIND_ATTENTION_BACKWARD


def _inputs(shape: tuple[int, ...], seed: int = 0, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    Q, K, V, dO = (rng.standard_normal(shape) for _ in range(4))
    return Q * scale, K * scale, V, dO


def _check(name: str, func, params=None, seed: int = 0):
    check = check_get(name)
    cleaned = check.clean_params(params or {})
    probes = check.prepare(cleaned, np.random.default_rng(seed), NAME)
    run = CallableExecutor(func).run(RunRequest("", "f", tuple(p.call for p in probes)))
    return check.judge(cleaned, probes, run.calls, NAME)


def test_the_reference_agrees_with_finite_differences_for_any_shapes():
    # n_q != n_k and d_k != d_v: the tuple cannot be stacked, but the maths is general.
    rng = np.random.default_rng(1)
    Q, K = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    V, dO = rng.standard_normal((2, 5, 2)), rng.standard_normal((2, 3, 2))
    mask = rng.random((3, 5)) < 0.7
    mask[:, 0] = True
    grads = reference.attention_backward(Q, K, V, dO, mask)
    numeric = reference.attention_finite_differences(Q, K, V, dO, mask, step=FD_STEP)
    for grad, fd, a in zip(grads, numeric, (Q, K, V), strict=True):
        assert grad.shape == a.shape
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


def test_the_stacked_reference_is_the_tuple_as_numpy_reads_it():
    args = _inputs((2, 4, 3))
    stacked = KIND.reference(*args)
    assert stacked.shape == (3, 2, 4, 3)
    np.testing.assert_array_equal(stacked, np.asarray(reference.attention_backward(*args)))


def test_a_key_nobody_may_attend_to_gets_no_gradient():
    Q, K, V, dO = _inputs((5, 3))
    keep = np.array([True, True, True, False, False])
    _, dK, dV = reference.attention_backward(Q, K, V, dO, keep)
    assert np.all(dK[3:] == 0.0) and np.all(dV[3:] == 0.0)


def test_pairs_but_no_scale_measured_no_axis_and_no_batched_copies():
    assert KIND.variant is attention_backward_variant
    assert KIND.weight_triples is None and KIND.other_axes is None
    assert KIND.batch_copies is False
    assert KIND.parameters == ("Q", "K", "V", "dO", "mask")


def test_the_diagnostic_inputs_share_one_shape_and_cover_every_tag():
    probes = KIND.diagnostic_probes(np.random.default_rng(0))
    for item in probes:
        Q, K, V, dO = item.call.args[:4]
        assert Q.shape == K.shape == V.shape == dO.shape
    tags = [next(iter(p.tags)) for p in probes]
    assert tags.count(PLAIN) == 5 and tags.count(MASK) == 2 and tags.count(LARGE) == 3
    # The cube: where .T has the shape of swapaxes, so it runs with the wrong values.
    cube = next(p for p in probes if p.call.args[0].shape == (4, 4, 4))
    assert not np.allclose(backward_dot_T(*cube.call.args)[0], KIND.reference(*cube.call.args)[0])


def test_the_rule_names_a_mask_that_must_have_the_scores_shape():
    probes = KIND.diagnostic_probes(np.random.default_rng(0))
    refs = [KIND.reference(*p.call.args) for p in probes]

    def outcome(func, call):
        try:
            return np.asarray(func(*call.args))
        except (IndexError, ValueError):
            return object()  # raised, as the diagnosis's RAISED

    indexed = [outcome(backward_mask_boolean_index, p.call) for p in probes]
    assert KIND.rules(probes, refs, indexed, set()) == {attention_backward.MASK_SHAPE_EXACT}
    leaked = [outcome(backward_mask_leak, p.call) for p in probes]
    assert KIND.rules(probes, refs, leaked, set()) == set()


def test_the_rule_names_a_gradient_kept_alive_where_it_vanishes():
    probes = KIND.diagnostic_probes(np.random.default_rng(0))
    refs = [KIND.reference(*p.call.args) for p in probes]
    clipped = [np.asarray(backward_clips_p(*p.call.args)) for p in probes]
    assert KIND.rules(probes, refs, clipped, set()) == {attention_backward.VANISHING_HIDDEN}
    assert KIND.rules(probes, refs, refs, set()) == set()
    rounded = [np.asarray(backward_rounded(*p.call.args)) for p in probes]
    assert KIND.rules(probes, refs, rounded, {"rounded-output"}) == set()


@pytest.mark.parametrize(
    ("options", "codes"),
    [
        ({"scale": "dropped", "dv": "p"}, ("backward-scale-dropped", "backward-transpose")),
        (
            {"jacobian": "constant", "mask_how": "ignored"},
            ("backward-softmax-constant", "mask-ignored"),
        ),
        ({"scale": "none", "softmax": "naive"}, ("missing-scale", "unstable-softmax")),
        # .T raises wherever batch axes do not make a cube: the raising inputs agree too.
        ({"scale": "dropped", "transpose": "T"}, ("backward-scale-dropped", "batch-transpose")),
        (
            {"jacobian": "diagonal", "mask_how": "after"},
            ("unnormalized-weights", "backward-diagonal-only"),
        ),
    ],
)
def test_two_mistakes_at_once_are_both_named(options, codes):
    probes = diagnosis.fixed_probes(NAME)

    def func(*args):
        return attention_backward_variant(*args, **options)

    run = CallableExecutor(func).run(RunRequest("", "f", tuple(p.call for p in probes)))
    assert set(diagnosis.diagnose(NAME, probes, run.calls)) == set(codes)


@pytest.mark.parametrize(
    "func",
    [reference.attention_backward, attention_backward_einsum, attention_backward_row_jacobians],
)
@pytest.mark.parametrize(
    "check",
    [
        "attention-backward-finite-differences",
        "attention-backward-values",
        "attention-backward-mask",
        "attention-backward-vanishing",
    ],
)
def test_every_check_passes_every_correct_formula(check, func):
    outcome = _check(check, func)
    assert outcome.passed, outcome.message


def test_finite_differences_name_the_wrong_gradient():
    outcome = _check("attention-backward-finite-differences", backward_scale_dropped)
    assert not outcome.passed
    assert "your dQ differs from the finite differences of sum(O * dO)" in outcome.message


def test_the_mask_check_sees_gradient_in_masked_positions():
    outcome = _check("attention-backward-mask", backward_mask_leak)
    assert not outcome.passed and "your dQ differs from the expected gradient" in outcome.message


def test_the_vanishing_check_fails_a_clipped_p_and_names_the_input():
    outcome = _check("attention-backward-vanishing", backward_clips_p)
    assert not outcome.passed
    assert "the gradient into Q must vanish with the saturated softmax" in outcome.message
    assert _check("attention-backward-values", backward_clips_p).passed


def test_a_tuple_of_different_shapes_is_said_so():
    Q, K, V, dO = _inputs((4, 3))
    probe = Probe(attention_backward_call(Q, K, V, dO), "Q, K, V and dO of shape (4, 3)")
    ragged = CallResult(
        error="ValueError: setting an array element with a sequence. The "
        "requested array has an inhomogeneous shape after 1 dimensions."
    )
    outcome = check_get("attention-backward-values").judge(
        {"rtol": 1e-6, "atol": 1e-9}, [probe], [ragged], NAME
    )
    assert outcome.message == messages.ATTN_BACKWARD_RAGGED.format(what=probe.what, shape="(4, 3)")


def test_trial_case_needs_one_shape_and_takes_a_causal_mask():
    rng = np.random.default_rng(0)
    case = KIND.trial_case(
        {
            "Q": {"shape": [3, 4]},
            "K": {"shape": [3, 4]},
            "V": {"shape": [3, 4]},
            "dO": {"shape": [3, 4]},
            "mask": "causal",
        },
        rng,
    )
    assert case.labels == ("Q", "K", "V", "dO", "mask")
    np.testing.assert_array_equal(case.args[4], causal_mask(3))
    with pytest.raises(TrialInputError) as err:
        KIND.trial_case(
            {
                "Q": {"shape": [3, 4]},
                "K": {"shape": [5, 4]},
                "V": {"shape": [5, 2]},
                "dO": {"shape": [3, 2]},
            },
            rng,
        )
    assert err.value.message == MSG_BACKWARD_SHAPES.format(
        shapes="Q (3, 4), K (5, 4), V (5, 2), dO (3, 2)"
    )


def test_the_masked_example_sends_no_gradient_to_the_first_query():
    case = next(c for c in KIND.visible_examples() if c.name == "masked")
    dQ = reference.attention_backward(*case.args)[0]
    # Query 0 sees key 0 only: its weight is exactly 1 whatever its scores.
    assert np.all(dQ[0] == 0.0)
    assert case.args[0] is WORKED_Q and case.args[1] is WORKED_K


def _plots(func) -> dict:
    results = []
    for call in plot_calls(NAME):
        try:
            results.append(CallResult(output=np.asarray(func(*call.args))))
        except Exception as exc:
            results.append(CallResult(error=f"{type(exc).__name__}: {exc}"))
    return plots_from_results(NAME, results)


def test_the_picture_shows_dq_vanish_and_a_dropped_scale_sit_above_it():
    right = _plots(reference.attention_backward)
    curve = right["vanishing"]
    assert curve["student"] == curve["reference"] and curve["error"] is None
    assert max(curve["reference"]) < 1.0 and curve["reference"][-1] < 1e-6
    assert right["example"]["max_abs_diff"] == 0.0
    dropped = _plots(backward_scale_dropped)["vanishing"]
    ratios = [s / r for s, r in zip(dropped["student"], dropped["reference"], strict=True)]
    assert ratios == pytest.approx([np.sqrt(8)] * len(ratios), rel=1e-3)
    clipped = _plots(backward_clips_p)["vanishing"]["student"]
    assert clipped[-1] > 100 * curve["reference"][-1]


def test_the_picture_says_where_the_function_failed():
    def raises(Q, K, V, dO, mask=None):
        raise ValueError("no")

    data = _plots(raises)
    assert data["vanishing"]["student"] == [None] * len(attention_backward.PLOT_SCALES)
    assert "×1: Your function raised an error here" in data["vanishing"]["error"]
    assert data["pictures"]["backward-scale-dropped"]["picture"] == "vanishing"


def test_a_correct_submission_passes_every_check():
    verdict = grade(
        spec=builtin_spec(NAME),
        code="",
        seed=0,
        executor=CallableExecutor(reference.attention_backward),
    )
    assert verdict.status == VerdictStatus.PASSED and verdict.diagnosis == ()
