"""Tests of grader/engine/kinds/softmax_backward.py: the softmax backward kind's own content."""

from __future__ import annotations

import re

import numpy as np
import pytest

from grader.engine import reference
from grader.engine.checks import check_get
from grader.engine.checks.softmax_backward import distinct_figures
from grader.engine.executors.base import CallResult, RunRequest
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.grading import grade
from grader.engine.kinds import softmax_backward
from grader.engine.kinds.base import LARGE, PLAIN
from grader.engine.kinds.softmax_backward_mistakes import (
    backward_clips_p,
    backward_flushes_tiny,
    backward_jacobian_transposed,
    backward_rounded,
)
from grader.engine.messages import BACKWARD_VANISHING
from grader.engine.plots import plot_calls, plots_from_results
from grader.engine.status import VerdictStatus
from grader.engine.trial_args import MSG_G_SHAPE, MSG_NOT_PROBABILITIES, TrialInputError
from tests.grader.helpers import builtin_spec
from tests.grader.variants import backward_jacobian_einsum, backward_row_loops

KIND = softmax_backward.KIND
NAME = reference.KIND_SOFTMAX_BACKWARD


def _p_g(shape: tuple[int, ...], scale: float = 3.0, seed: int = 0):
    rng = np.random.default_rng(seed)
    return reference.softmax(rng.standard_normal(shape) * scale), rng.standard_normal(shape)


def _jacobian(p: np.ndarray) -> np.ndarray:
    return p[..., :, None] * (np.eye(p.shape[-1]) - p[..., None, :])


def test_the_reference_is_the_jacobian_times_g_and_sums_to_zero():
    p, g = _p_g((2, 3, 5))
    J = _jacobian(p)
    np.testing.assert_allclose(J, np.swapaxes(J, -1, -2))  # symmetric: J^T g = J g
    expected = np.einsum("...ij,...j->...i", J, g)
    out = reference.softmax_backward(p, g)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-15)
    # Raising every score alike changes no weight: each row of the gradient sums to 0.
    np.testing.assert_allclose(out.sum(axis=-1), 0.0, atol=1e-15)


def test_no_pairs_no_scale_no_axis_argument():
    assert KIND.variant is None and KIND.weight_triples is None and KIND.other_axes is None
    assert KIND.parameters == ("p", "g") and KIND.batch_copies is False


def test_a_transposed_stack_of_jacobians_is_right_in_1d_only():
    p, g = _p_g((6,))
    np.testing.assert_allclose(backward_jacobian_transposed(p, g), reference.softmax_backward(p, g))
    square_p, square_g = _p_g((5, 5))
    out = backward_jacobian_transposed(square_p, square_g)
    assert out.shape == (5, 5)
    assert not np.allclose(out, reference.softmax_backward(square_p, square_g))
    with pytest.raises(ValueError):
        backward_jacobian_transposed(*_p_g((4, 6)))


def test_the_diagnostic_inputs_are_softmax_outputs_with_saturated_rows():
    probes = KIND.diagnostic_probes(np.random.default_rng(0))
    assert {np.ndim(p.call.args[0]) for p in probes if PLAIN in p.tags} == {1, 2, 3}
    for item in probes:
        p, g = item.call.args
        assert p.shape == g.shape
        np.testing.assert_allclose(p.sum(axis=-1), 1.0)
    large = [p.call.args[0] for p in probes if LARGE in p.tags]
    smallest = min(float(np.min(p[p > 0])) for p in large)
    assert smallest < 1e-24 and any(np.any(p == 0.0) for p in large)


def _diagnosis(func) -> tuple[str, ...]:
    verdict = grade(spec=builtin_spec(NAME), code="", seed=0, executor=CallableExecutor(func))
    return verdict.diagnosis


@pytest.mark.parametrize("func", [backward_clips_p, backward_flushes_tiny])
def test_the_rule_names_a_gradient_hidden_where_it_vanishes(func):
    assert _diagnosis(func) == (softmax_backward.VANISHING_HIDDEN,)


def test_the_rule_leaves_rounding_to_its_own_code():
    assert _diagnosis(backward_rounded) == ("rounded-output",)


def test_tiny_entries_are_compared_relatively_except_each_rows_largest_weight():
    p = np.array([[1.0 - 2e-30, 1e-30, 1e-30]])
    ref = np.array([[-3e-30, 1e-30, 2e-30]])
    close = ref * (1 + 1e-9)
    kwargs = {"rtol": 1e-6, "floor": 1e-300}
    assert not softmax_backward.tiny_entries_differ(p, close, ref, **kwargs)
    top_rounded = np.array([[0.0, 1e-30, 2e-30]])  # p * (g - sum) cannot resolve it
    assert not softmax_backward.tiny_entries_differ(p, top_rounded, ref, **kwargs)
    assert softmax_backward.tiny_entries_differ(p, np.array([[0.0, 0.0, 0.0]]), ref, **kwargs)
    assert softmax_backward.tiny_entries_differ(p, np.array([[0, 1e-7, 1e-7]]), ref, **kwargs)


def _vanishing(func, params=None):
    check = check_get("backward-vanishing")
    cleaned = check.clean_params(params or {})
    probes = check.prepare(cleaned, np.random.default_rng(4), NAME)
    run = CallableExecutor(func).run(RunRequest("", "f", tuple(p.call for p in probes)))
    return check.judge(cleaned, probes, run.calls, NAME)


@pytest.mark.parametrize(
    "func", [reference.softmax_backward, backward_jacobian_einsum, backward_row_loops]
)
def test_the_vanishing_check_passes_every_correct_formula(func):
    outcome = _vanishing(func)
    assert outcome.passed, outcome.message


@pytest.mark.parametrize("func", [backward_clips_p, backward_flushes_tiny])
def test_the_vanishing_check_fails_a_clipped_or_flushed_gradient(func):
    outcome = _vanishing(func)
    assert not outcome.passed
    head = BACKWARD_VANISHING.split("{what}")[1].split("{expected")[0]
    assert head in outcome.message and "do not clip p" in outcome.message


def _backward_in_float32(p, g):
    p, g = np.asarray(p, np.float32), np.asarray(g, np.float32)
    return p * (g - np.sum(g * p, axis=-1, keepdims=True))


def test_a_float32_gradient_fails_with_two_numbers_that_differ():
    outcome = _vanishing(_backward_in_float32)
    assert not outcome.passed
    shown = re.search(r"value is (\S+) came back as (\S+) \(", outcome.message)
    assert shown is not None and shown[1] != shown[2], outcome.message
    assert "compute in float32" in outcome.message


@pytest.mark.parametrize(
    ("a", "b", "shown"),
    [
        (-6.4201e-11, -6.4201e-11 * (1 + 3e-8), ("-6.4201e-11", "-6.4201002e-11")),
        (4.5e-30, 7.54e-11, ("4.5e-30", "7.54e-11")),
        (1.0, 1.0 + 2e-7, ("1", "1.0000002")),
    ],
)
def test_distinct_figures_tell_the_two_apart(a, b, shown):
    assert distinct_figures(a, b) == shown


def test_the_vanishing_check_sees_values_near_1e_30():
    check = check_get("backward-vanishing")
    probes = check.prepare(check.clean_params(None), np.random.default_rng(4), NAME)
    tiny = [np.abs(reference.softmax_backward(*p.call.args)) for p in probes]
    assert any(np.any((t > 1e-32) & (t < 1e-28)) for t in tiny)
    assert check.label == ("A saturated softmax's vanishing gradient (scores of std 16, 32 and 64)")


def test_trial_case_from_a_shape_is_a_softmax_output():
    case = KIND.trial_case(
        {"p": {"shape": [2, 4]}, "g": {"shape": [2, 4]}}, np.random.default_rng(0)
    )
    p, g = case.args
    np.testing.assert_allclose(p.sum(axis=-1), 1.0)
    assert g.shape == (2, 4) and case.labels == ("p", "g")


def test_trial_case_refuses_what_is_no_softmax_output_or_a_g_of_another_shape():
    rng = np.random.default_rng(0)
    with pytest.raises(TrialInputError) as e:
        KIND.trial_case({"p": [[0.5, 0.7]], "g": [[1.0, 0.0]]}, rng)
    assert e.value.message == MSG_NOT_PROBABILITIES
    with pytest.raises(TrialInputError) as e:
        KIND.trial_case({"p": [0.33, 0.33, 0.34], "g": [1.0, 0.0]}, rng)
    assert e.value.message == MSG_G_SHAPE.format(p="(3,)", g="(2,)")


def test_the_worked_example_gives_one_column_of_the_jacobian():
    case = KIND.visible_examples()[0]
    p, g = case.args
    out = reference.softmax_backward(p, g)
    np.testing.assert_allclose(out, _jacobian(p)[..., 0, :])
    np.testing.assert_allclose(p[0], [0.506, 0.186, 0.307], atol=5e-4)


def _plots(func) -> dict:
    results = []
    for call in plot_calls(NAME):
        try:
            results.append(CallResult(output=np.asarray(func(*call.args))))
        except Exception as exc:
            results.append(CallResult(error=f"{type(exc).__name__}: {exc}"))
    return plots_from_results(NAME, results)


def test_the_picture_shows_the_gradient_vanish_and_a_clipped_one_stop():
    right = _plots(reference.softmax_backward)
    curve = right["vanishing"]
    assert curve["student"] == curve["reference"] and curve["error"] is None
    assert curve["scales"][0] == 1.0 and curve["reference"][0] == pytest.approx(0.25, abs=1e-3)
    assert curve["reference"][-1] < 1e-30
    assert right["example"]["max_abs_diff"] == 0.0
    assert all(abs(s) < 1e-3 for s in right["example"]["reference_row_sums"])
    clipped = _plots(backward_clips_p)["vanishing"]["student"]
    assert clipped[-1] > 1e-8  # floored near 1e-7: it stops falling
    assert _plots(backward_jacobian_transposed)["vanishing"]["error"] is None


def test_the_picture_says_where_the_function_failed():
    def raises(p, g):
        raise ValueError("no")

    data = _plots(raises)
    assert data["vanishing"]["student"] == [None] * len(softmax_backward.PLOT_SCALES)
    assert "×1: Your function raised an error here" in data["vanishing"]["error"]  # noqa: RUF001
    assert data["pictures"][softmax_backward.VANISHING_HIDDEN]["picture"] == "vanishing"


def test_a_correct_submission_passes_every_check():
    verdict = grade(
        spec=builtin_spec(NAME),
        code="",
        seed=0,
        executor=CallableExecutor(reference.softmax_backward),
    )
    assert verdict.status == VerdictStatus.PASSED and verdict.diagnosis == ()
