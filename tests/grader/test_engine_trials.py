"""Run before Submit, the pure part (grader.engine.trials): no database, no sandbox.

The executors here run trusted callables in this process (CallableExecutor), never source.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from grader.engine import reference
from grader.engine import trial_args as ta
from grader.engine import trials as t
from grader.engine.executors.base import (
    Call,
    CallResult,
    Limits,
    LocalRun,
    RunRequest,
    RunResult,
    RunStatus,
)
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.inputs import WORKED_OUTPUT
from grader.engine.kinds import reference_evaluate

ATT = reference.KIND_ATTENTION
MHA = reference.KIND_MULTI_HEAD
SMX = reference.KIND_SOFTMAX
BWD = reference.KIND_SOFTMAX_BACKWARD
ABW = reference.KIND_ATTENTION_BACKWARD
DEMO = reference.KIND_DEMONSTRATION


def no_scale(Q, K, V, mask=None):  # the missing-scale misconception
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def transposed(Q, K, V, mask=None):  # K Qᵀ: right only when n == m and symmetric
    return reference.attention(K, Q, V) if Q.shape == K.shape else (K @ Q.T)


def run(func, kind: str = ATT, spec=None, entry: str = "attention") -> dict:
    return t.trial_execute(
        kind=kind,
        entry_point=entry,
        code="(trusted callable)",
        cases=t.trial_cases(kind, spec),
        limits=Limits(),
        executor=CallableExecutor(func),
    )


# --- The visible examples ------------------------------------------------------------------------


def test_attention_examples_are_the_worked_example_a_masked_and_a_batched_case() -> None:
    cases = t.visible_examples(ATT)
    assert [c.name for c in cases] == ["worked-example", "masked", "batched"]
    worked, masked, batched = cases
    # The seed material's 3-token example: the reference reproduces the hand-worked output.
    np.testing.assert_allclose(t.trial_expected(ATT, worked), WORKED_OUTPUT, atol=1e-3)
    assert masked.labels[-1] == "mask" and masked.args[3].dtype == bool
    # Causal: the first token can only copy V's first row.
    np.testing.assert_allclose(t.trial_expected(ATT, masked)[0], [1.0, 0.0])
    assert batched.args[0].ndim == 3 and batched.args[0].shape[-2] != batched.args[1].shape[-2]


@pytest.mark.parametrize("kind", reference.KINDS)
def test_every_kind_has_three_examples_its_reference_passes(kind: str) -> None:
    entry = {
        ATT: "attention",
        MHA: "multi_head_attention",
        SMX: "softmax",
        BWD: "softmax_backward",
        ABW: "attention_backward",
        DEMO: "scaling_demo",
    }[kind]
    func = {
        ATT: reference.attention,
        MHA: reference.multi_head_attention,
        SMX: reference.softmax,
        BWD: reference.softmax_backward,
        ABW: reference.attention_backward,
        DEMO: reference.scaling_demonstration,
    }
    report = run(func[kind], kind, entry=entry)
    assert report["status"] == t.STATUS_OK
    assert len(report["cases"]) == 3
    assert all(c["match"] and c["error"] is None for c in report["cases"])
    assert all(c["max_abs_diff"] < 1e-12 for c in report["cases"])


def test_the_statement_view_shows_inputs_and_the_expected_output() -> None:
    view = t.visible_examples_view(ATT)
    first = view[0]
    assert [i["name"] for i in first["inputs"]] == ["Q", "K", "V"]
    assert first["inputs"][0]["values"] == [[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 1, 0]]
    assert first["expected"]["shape"] == [3, 2]
    assert first["expected"]["values"][0] == [0.8137, 0.4935]
    assert t.visible_examples_view("no-such-kind") == []


def test_examples_are_fresh_arrays_each_time() -> None:
    a = t.visible_examples(ATT)[0].args[0]
    a[0, 0] = 99.0
    assert t.visible_examples(ATT)[0].args[0][0, 0] == 1.0


# --- Comparing ---------------------------------------------------------------------------------


def test_a_missing_scale_mismatches_every_example_and_shows_the_difference() -> None:
    report = run(no_scale)
    assert report["status"] == t.STATUS_OK
    assert [c["match"] for c in report["cases"]] == [False, False, False]
    worked = report["cases"][0]
    assert worked["output"]["shape"] == [3, 2] and worked["error"] is None
    assert worked["max_abs_diff"] > 0.05
    assert worked["expected"]["values"][0] == [0.8137, 0.4935]


def test_a_wrong_shape_is_named_and_not_compared() -> None:
    report = run(transposed)
    batched = report["cases"][2]
    assert not batched["match"] and batched["max_abs_diff"] is None
    assert batched["error"] is not None


def test_an_exception_is_shown_as_the_students_traceback() -> None:
    def boom(Q, K, V, mask=None):
        raise ValueError("my bug")

    report = run(boom)
    assert all("ValueError: my bug" in c["error"] for c in report["cases"])
    assert not any(c["match"] for c in report["cases"])


def test_non_numeric_and_non_finite_outputs_are_told_apart() -> None:
    def text(Q, K, V, mask=None):
        return "hello"

    def nan(Q, K, V, mask=None):
        return np.full((*Q.shape[:-1], V.shape[-1]), np.nan)

    assert run(text)["cases"][0]["error"].startswith("Your function returned")
    row = run(nan)["cases"][0]
    assert row["error"] == t.MSG_NOT_FINITE
    assert row["output"]["values"][0] == ["nan", "nan"]  # JSON cannot hold NaN


class _Stopped:
    """An executor whose run stopped (a limit) after its first call."""

    def __init__(self, status: RunStatus, n: int = 1) -> None:
        self.status, self.n = status, n

    def start(self, request: RunRequest) -> LocalRun:
        return LocalRun(self._calls, request)

    def _calls(self, calls: Sequence[Call]) -> RunResult:
        out = [CallResult(output=reference_evaluate(ATT, c.args)) for c in calls[: self.n]]
        return RunResult(status=self.status, calls=out, message="CPU limit hit.", stdout="hi\n")

    def close(self) -> None: ...


def _execute(executor) -> dict:
    return t.trial_execute(
        kind=ATT,
        entry_point="attention",
        code="x",
        cases=t.visible_examples(ATT),
        limits=Limits(),
        executor=executor,
    )


def test_a_run_stopped_part_way_keeps_the_cases_that_ran() -> None:
    report = _execute(_Stopped(RunStatus.CPU_LIMIT))
    assert report["status"] == t.STATUS_OK and report["message"] == "CPU limit hit."
    assert report["cases"][0]["match"]
    assert report["cases"][1]["error"] == t.MSG_NOT_RUN.format(reason="CPU limit hit.")
    assert report["stdout"] == "hi\n"


def test_code_that_never_ran_and_our_own_failures_have_their_statuses() -> None:
    report = _execute(_Stopped(RunStatus.SYNTAX_ERROR, n=0))
    assert report == {
        "status": t.STATUS_ERROR,
        "message": "CPU limit hit.",
        "stdout": "hi\n",
        "cases": [],
    }
    internal = _execute(_Stopped(RunStatus.INTERNAL, n=0))
    assert internal["status"] == t.STATUS_INTERNAL and internal["message"] == t.MSG_INTERNAL


# --- A custom input ----------------------------------------------------------------------------


def test_fields_typed_on_the_page_become_the_api_spec() -> None:
    spec = t.trial_spec_from_fields(
        ATT, {"Q": "2, 3, 4", "K": "2x5x4", "V": "[[1, 0], [0, 1]]", "mask": "causal", "seed": "7"}
    )
    assert spec == {
        "Q": {"shape": [2, 3, 4]},
        "K": {"shape": [2, 5, 4]},
        "V": [[1, 0], [0, 1]],
        "mask": "causal",
        "seed": 7,
    }
    assert t.trial_spec_from_fields(ATT, {"Q": " ", "seed": "3"}) is None
    assert t.trial_spec_from_fields(SMX, {"x": "(4,)", "axis": "-1"}) == {
        "x": {"shape": [4]},
        "axis": -1,
    }


def test_a_shape_gives_seeded_values_rounded_to_two_decimals() -> None:
    spec = {"Q": {"shape": [3, 4]}, "K": {"shape": [5, 4]}, "V": {"shape": [5, 2]}, "seed": 1}
    a, b = t.trial_input_case(ATT, spec), t.trial_input_case(ATT, spec)
    for x, y in zip(a.args, b.args, strict=True):
        np.testing.assert_array_equal(x, y)  # the worker rebuilds what the web checked
    assert np.array_equal(a.args[0], np.round(a.args[0], 2))
    assert a.name == ta.CUSTOM and a.about == "Your input: Q (3, 4), K (5, 4), V (5, 2)."
    other = t.trial_input_case(ATT, {**spec, "seed": 2})
    assert not np.array_equal(a.args[0], other.args[0])


def test_the_custom_input_runs_after_the_examples() -> None:
    spec = {"Q": [[1.0, 2.0]], "K": {"shape": [4, 2]}, "V": {"shape": [4, 3]}, "mask": "causal"}
    report = run(reference.attention, spec=spec)
    assert [c["name"] for c in report["cases"]][-1] == ta.CUSTOM
    custom = report["cases"][-1]
    assert custom["match"] and custom["expected"]["shape"] == [1, 3]
    assert custom["inputs"] == [
        {"name": "Q", "shape": [1, 2]},
        {"name": "K", "shape": [4, 2]},
        {"name": "V", "shape": [4, 3]},
        {"name": "mask", "shape": [1, 4]},
    ]
    # The causal mask leaves one query a single key (any scale gives V's first row): unmasked.
    unmasked = {k: v for k, v in spec.items() if k != "mask"}
    assert not run(no_scale, spec=unmasked)["cases"][-1]["match"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ([1, 2], t.MSG_NOT_AN_OBJECT),
        ({"Q": [[1]], "K": [[1]]}, t.MSG_MISSING_ARGUMENT.format(name="V")),
        (
            {"Q": [[1]], "K": [[1]], "V": [[1]], "W": 1},
            t.MSG_UNKNOWN_ARGUMENT.format(name="W", names="Q, K, V, mask"),
        ),
        (
            {"Q": {"shape": [17, 2]}, "K": [[1, 2]], "V": [[1]]},
            ta.MSG_DIM_TOO_LARGE.format(name="Q", shape="(17, 2)"),
        ),
        (
            {"Q": {"shape": [16, 16, 16]}, "K": [[1]], "V": [[1]]},
            ta.MSG_TOO_MANY_VALUES.format(name="Q", n=4096),
        ),
        (
            {"Q": {"shape": [4]}, "K": [[1]], "V": [[1]]},
            ta.MSG_NDIM.format(name="Q", low=2, high=4, ndim=1),
        ),
        ({"Q": {"shape": [0, 2]}, "K": [[1]], "V": [[1]]}, ta.MSG_BAD_SHAPE.format(name="Q")),
        ({"Q": [[1, "a"]], "K": [[1]], "V": [[1]]}, ta.MSG_NOT_NUMBERS.format(name="Q")),
        ({"Q": [[1, 2], [3]], "K": [[1]], "V": [[1]]}, ta.MSG_NOT_NUMBERS.format(name="Q")),
        ({"Q": [[1e400]], "K": [[1]], "V": [[1]]}, ta.MSG_NOT_NUMBERS.format(name="Q")),
        ({"Q": "3, 4", "K": [[1]], "V": [[1]]}, ta.MSG_BAD_ARRAY.format(name="Q")),
        ({"Q": [[1, 2]], "K": [[1]], "V": [[1]]}, ta.MSG_LAST_DIMS.format(q=2, k=1)),
        ({"Q": [[1]], "K": [[1], [2]], "V": [[1]]}, ta.MSG_KEY_ROWS.format(k=2, v=1)),
        (
            {"Q": {"shape": [2, 1, 1]}, "K": {"shape": [3, 1, 1]}, "V": {"shape": [1, 1]}},
            ta.MSG_BATCH.format(shapes="Q (2,), K (3,), V ()"),
        ),
        (
            {"Q": [[1]], "K": [[1], [2]], "V": [[1], [2]], "mask": [[True, False, True]]},
            ta.MSG_MASK_SHAPE.format(mask="(1, 3)", target="(1, 2)"),
        ),
        ({"Q": [[1]], "K": [[1]], "V": [[1]], "mask": [[False]]}, ta.MSG_MASK_EMPTY_ROW),
        ({"Q": [[1]], "K": [[1]], "V": [[1]], "mask": [[0.5]]}, ta.MSG_NOT_BOOLS),
        ({"Q": [[1]], "K": [[1]], "V": [[1]], "seed": -1}, t.MSG_BAD_SEED),
        ({"Q": [[1]], "K": [[1]], "V": [[1]], "seed": True}, t.MSG_BAD_SEED),
        (
            {"Q": {"shape": [16, 16, 1]}, "K": {"shape": [16, 1]}, "V": {"shape": [16, 16]}},
            ta.MSG_OUTPUT_TOO_LARGE.format(n=16 * 16 * 16),
        ),
    ],
)
def test_a_bad_custom_input_is_refused_with_a_clear_message(spec, message: str) -> None:
    with pytest.raises(ta.TrialInputError) as raised:
        t.trial_input_case(ATT, spec)
    assert raised.value.message == message


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"Q": "3; 4"}, ta.MSG_BAD_SHAPE.format(name="Q")),
        ({"Q": "[[1, 2]"}, None),  # not valid JSON: the message names the parser's complaint
        ({"Q": "x" * (t.MAX_FIELD_CHARS + 1)}, t.MSG_FIELD_TOO_LONG.format(name="Q")),
        ({"Q": "3, 4", "seed": "abc"}, t.MSG_BAD_SEED),
    ],
)
def test_bad_page_fields_are_refused(fields: dict[str, str], message: str | None) -> None:
    with pytest.raises(ta.TrialInputError) as raised:
        t.trial_spec_from_fields(ATT, fields)
    if message is None:
        assert raised.value.message.startswith("Q: this is not valid JSON")
    else:
        assert raised.value.message == message


def test_multi_head_inputs_draw_missing_weights_and_check_the_heads() -> None:
    case = t.trial_input_case(MHA, {"X": {"shape": [2, 3, 4]}, "n_heads": 2, "mask": "causal"})
    assert case.labels == ("X", "W_q", "W_k", "W_v", "W_o", "n_heads", "mask")
    assert all(w.shape == (4, 4) for w in case.args[1:5]) and case.args[5] == 2
    with pytest.raises(ta.TrialInputError, match="n_heads must divide d_model"):
        t.trial_input_case(MHA, {"X": {"shape": [3, 4]}, "n_heads": 3})
    with pytest.raises(ta.TrialInputError) as raised:
        t.trial_input_case(MHA, {"X": {"shape": [3, 4]}, "n_heads": 2, "W_q": [[1.0]]})
    assert raised.value.message == ta.MSG_WEIGHT_SHAPE.format(name="W_q", d=4, shape="(1, 1)")


def test_softmax_axis_is_bounded_by_the_inputs_dimensions() -> None:
    case = t.trial_input_case(SMX, {"x": [[1.0, 2.0], [3.0, 4.0]], "axis": 0})
    np.testing.assert_allclose(t.trial_expected(SMX, case).sum(axis=0), [1.0, 1.0])
    with pytest.raises(ta.TrialInputError) as raised:
        t.trial_input_case(SMX, {"x": [1.0, 2.0], "axis": 1})
    assert raised.value.message == ta.MSG_AXIS.format(low=-1, high=0, ndim=1)
