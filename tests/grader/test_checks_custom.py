"""grader.engine.checks.custom: the instructor's own check, and how grading and Validate run it.

The instructor's code is played here by trusted test functions (``InstructorCheckExecutor``,
``SourceLookupExecutor``): what is under test is the check's contract and grading's handling
of it, not the sandbox (tests/sandbox/test_custom_check.py runs it there).
"""

from pathlib import Path

import numpy as np
import pytest

from grader.engine import limits, messages, reference
from grader.engine.checks import CheckNotRun, ParamsError, Referral, check_get
from grader.engine.checks.custom import (
    ENTRY_POINT,
    MSG_BROKEN_MISSING,
    MSG_BROKEN_RAISED,
    MSG_BROKEN_RESULT,
    MSG_BROKEN_STOPPED,
    MSG_FAILED_DEFAULT,
    MSG_INPUTS_UNKNOWN,
    MSG_NOT_RUN,
    MSG_SOURCE_EMPTY,
    MSG_SOURCE_NO_ENTRY,
    MSG_SOURCE_SYNTAX,
    source_problems,
)
from grader.engine.executors.base import CallResult, RunRequest, RunResult, RunStatus
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.grading import (
    MSG_INTERNAL,
    CheckSpec,
    ExerciseSpec,
    check_rng,
    grade,
)
from grader.engine.kinds import REFERENCE_SOURCES, kind_get
from grader.engine.kinds.softmax_mistakes import (
    softmax_ignores_axis,
    softmax_unnormalized,
    softmax_whole_array,
)
from grader.engine.status import VerdictStatus
from grader.engine.validation import CELL_ERROR, validate_spec
from tests.grader.fakes import InstructorCheckExecutor, SourceLookupExecutor

# What an instructor writes: the rows of the output sum to 1.
ROWS_SUM_TO_ONE = """
from pathlib import Path

import numpy as np


def check(student, expected, x, *rest):
    return bool(np.allclose(student.sum(axis=-1), 1.0, atol=1e-9))
"""


def rows_sum_to_one(student, expected, x, *rest):
    """The trusted stand-in for ROWS_SUM_TO_ONE."""
    return bool(np.allclose(student.sum(axis=-1), 1.0, atol=1e-9))


def raises(student, expected, *inputs):
    raise ValueError("the instructor's bug")


CUSTOM = check_get("custom")


def softmax_spec(**params) -> ExerciseSpec:
    params = {"source": ROWS_SUM_TO_ONE, **params}
    return ExerciseSpec(
        slug="softmax-custom",
        kind=reference.KIND_SOFTMAX,
        entry_point="softmax",
        checks=(
            CheckSpec("softmax-values"),
            CheckSpec("custom", params, label="Rows sum to 1"),
        ),
    )


# --- the source, checked on save without running it ---------------------------------------------


def test_a_good_source_has_no_problems():
    assert source_problems(ROWS_SUM_TO_ONE) == []
    assert source_problems("def check(*args):\n    return True\n") == []


@pytest.mark.parametrize(
    "source,problem",
    [
        ("", MSG_SOURCE_EMPTY),
        ("   \n", MSG_SOURCE_EMPTY),
        (
            "def check(a, b):\n  return (\n",
            MSG_SOURCE_SYNTAX.format(line=2, error="'(' was never closed"),
        ),
        ("def judge(student, expected):\n    return True\n", MSG_SOURCE_NO_ENTRY),
        ("def check(student):\n    return True\n", MSG_SOURCE_NO_ENTRY),
        ("class C:\n    def check(self, a, b):\n        return True\n", MSG_SOURCE_NO_ENTRY),
        ("check = lambda a, b: True\n", MSG_SOURCE_NO_ENTRY),
    ],
)
def test_a_broken_source_is_refused_with_its_message(source, problem):
    assert source_problems(source) == [problem]


def test_the_source_is_compiled_never_run(tmp_path):
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').write('x')\n\ndef check(a, b):\n    return True\n"
    assert source_problems(source) == []
    assert not marker.exists()


def test_params_need_a_source_and_known_inputs():
    with pytest.raises(ParamsError) as missing:
        CUSTOM.clean_params({})
    assert missing.value.errors == ["source: required"]
    with pytest.raises(ParamsError) as unknown:
        CUSTOM.clean_params({"source": ROWS_SUM_TO_ONE, "inputs": "nope"})
    assert unknown.value.errors == [MSG_INPUTS_UNKNOWN.format(name="nope")]
    with pytest.raises(ParamsError) as itself:
        CUSTOM.clean_params({"source": ROWS_SUM_TO_ONE, "inputs": "custom"})
    assert itself.value.errors == [MSG_INPUTS_UNKNOWN.format(name="custom")]
    with pytest.raises(ParamsError) as too_long:
        CUSTOM.clean_params({"source": "#" * (limits.CUSTOM_CHECK_SOURCE_MAX_CHARS + 1)})
    assert too_long.value.errors == [
        f"source: at most {limits.CUSTOM_CHECK_SOURCE_MAX_CHARS} characters"
    ]
    with pytest.raises(ParamsError) as not_text:
        CUSTOM.clean_params({"source": 3})
    assert not_text.value.errors == ["source: a string is required"]
    cleaned = CUSTOM.clean_params({"source": ROWS_SUM_TO_ONE})
    assert cleaned == {"source": ROWS_SUM_TO_ONE, "message": MSG_FAILED_DEFAULT, "inputs": ""}


# --- its inputs and its judgement --------------------------------------------------------------


@pytest.mark.parametrize("kind", reference.KINDS)
def test_the_inputs_are_those_of_the_kinds_values_check_freshly_drawn(kind):
    params = CUSTOM.clean_params({"source": ROWS_SUM_TO_ONE})
    probes = CUSTOM.prepare(params, np.random.default_rng(1), kind)
    source = check_get(kind_get(kind).values_check)
    theirs = source.prepare(source.clean_params({}), np.random.default_rng(1), kind)
    assert [p.what for p in probes] == [p.what for p in theirs]
    other = CUSTOM.prepare(params, np.random.default_rng(2), kind)
    # Arrays, or the whole numbers of a kind whose arguments are only those (the seeds of the
    # demonstration's draws).
    assert not all(
        np.array_equal(a, b)
        for p, q in zip(probes, other, strict=True)
        for a, b in zip(p.call.args, q.call.args, strict=True)
        if isinstance(a, np.ndarray | int)
    )


def test_inputs_of_a_named_check_and_of_no_other_kind():
    params = CUSTOM.clean_params({"source": ROWS_SUM_TO_ONE, "inputs": "softmax-axis"})
    probes = CUSTOM.prepare(params, np.random.default_rng(0), reference.KIND_SOFTMAX)
    assert any("axis" in p.what for p in probes)
    with pytest.raises(ValueError):
        CUSTOM.prepare(params, np.random.default_rng(0), reference.KIND_ATTENTION)


def _judged(student, **params):
    params = CUSTOM.clean_params({"source": ROWS_SUM_TO_ONE, **params})
    probes = CUSTOM.prepare(params, np.random.default_rng(0), reference.KIND_SOFTMAX)
    run = CallableExecutor(student).run(RunRequest("", "softmax", tuple(p.call for p in probes)))
    return probes, CUSTOM.judge(params, probes, run.calls, reference.KIND_SOFTMAX)


def test_the_instructors_run_gets_only_arrays_and_its_own_limits():
    probes, referral = _judged(reference.softmax)
    assert isinstance(referral, Referral)
    request = referral.request
    assert request.code == ROWS_SUM_TO_ONE
    assert request.entry_point == ENTRY_POINT
    assert request.limits == limits.CUSTOM_CHECK_LIMITS
    assert not request.second_phase
    assert len(request.calls) == len(probes)
    for probe, call in zip(probes, request.calls, strict=True):
        student, expected, *inputs = call.args
        np.testing.assert_allclose(student, reference.softmax(*probe.call.args))
        np.testing.assert_array_equal(expected, reference.softmax(*probe.call.args))
        assert len(inputs) == len(probe.call.args)
        for a in call.args:
            assert a is None or isinstance(a, np.ndarray | int | float | bool)


def test_what_the_students_code_got_wrong_by_itself_is_said_without_the_instructors_code():
    _, crashed = _judged(lambda x, axis=-1: 1 / 0)
    assert not crashed.passed
    assert crashed.message.startswith(messages.CALL_ERROR.split("{error}")[0].split("{what}")[0])
    assert "ZeroDivisionError" in crashed.message
    _, flat = _judged(lambda x, axis=-1: np.ravel(reference.softmax(x)))
    assert not flat.passed
    assert "the output must have shape" in flat.message


def _conclude(outputs, status=RunStatus.OK, message="", **params):
    probes, referral = _judged(reference.softmax, **params)
    calls = [o if isinstance(o, CallResult) else CallResult(output=np.asarray(o)) for o in outputs]
    if outputs == "all-true":
        calls = [CallResult(output=np.asarray(True)) for _ in probes]
    return probes, referral.conclude(RunResult(status, calls, message))


def test_true_for_every_input_passes():
    _, outcome = _conclude("all-true")
    assert outcome.passed and outcome.message == messages.PASSED


def test_false_on_an_input_fails_with_the_instructors_message_naming_it():
    probes, referral = _judged(reference.softmax, message="On {what}: rows {what.__class__}")
    answers = [np.asarray(1.0)] * len(probes)
    answers[1] = np.asarray(0)
    outcome = referral.conclude(RunResult(RunStatus.OK, [CallResult(output=a) for a in answers]))
    assert not outcome.passed
    # Replaced, never formatted: the instructor's braces are text.
    assert outcome.message == f"On {probes[1].what}: rows {{what.__class__}}"


@pytest.mark.parametrize(
    "answer,got",
    [
        (np.asarray(0.5), "0.5"),
        (np.asarray([1, 1]), "an array of shape (2,)"),
        (np.asarray(np.nan), "nan"),
    ],
)
def test_an_answer_that_is_no_verdict_breaks_the_check(answer, got):
    probes, referral = _judged(reference.softmax)
    calls = [CallResult(output=np.asarray(True)) for _ in probes]
    calls[-1] = CallResult(output=answer)
    with pytest.raises(CheckNotRun) as broken:
        referral.conclude(RunResult(RunStatus.OK, calls))
    assert broken.value.detail == MSG_BROKEN_RESULT.format(what=probes[-1].what, got=got)


def test_a_crash_a_limit_or_missing_answers_break_the_check_even_after_a_fail():
    probes, referral = _judged(reference.softmax)
    calls = [CallResult(output=np.asarray(False))] + [
        CallResult(error="ValueError: oops") for _ in probes[1:]
    ]
    with pytest.raises(CheckNotRun) as raised:
        referral.conclude(RunResult(RunStatus.OK, calls))
    assert raised.value.detail == MSG_BROKEN_RAISED.format(
        what=probes[1].what, error="ValueError: oops"
    )
    with pytest.raises(CheckNotRun) as stopped:
        referral.conclude(RunResult(RunStatus.WALL_LIMIT, [], "Time limit."))
    assert stopped.value.detail == MSG_BROKEN_STOPPED.format(
        status="wall-limit", message="Time limit."
    )
    with pytest.raises(CheckNotRun) as missing:
        referral.conclude(RunResult(RunStatus.OK, [CallResult(output=np.asarray(True))]))
    assert missing.value.detail == MSG_BROKEN_MISSING.format(got=1, n=len(probes))


# --- in a grade ---------------------------------------------------------------------------------


def test_the_reference_passes_in_two_runs_the_instructors_after_the_students():
    executor = InstructorCheckExecutor(reference.softmax, rows_sum_to_one)
    verdict = grade(spec=softmax_spec(), code="student", seed=3, executor=executor)
    assert verdict.status == VerdictStatus.PASSED, verdict
    assert [c.passed for c in verdict.checks] == [True, True]
    assert verdict.checks[1].label == "Rows sum to 1"
    assert [r.entry_point for r in executor.requests] == ["softmax", ENTRY_POINT]
    assert executor.overlapped == 0
    assert executor.requests[1].code == ROWS_SUM_TO_ONE
    assert "student" not in {r.code for r in executor.requests[1:]}


def test_the_hidden_inputs_depend_on_the_seed_and_the_checks_position():
    executor = InstructorCheckExecutor(reference.softmax, rows_sum_to_one)
    grade(spec=softmax_spec(), code="student", seed=3, executor=executor)
    params = CUSTOM.clean_params({"source": ROWS_SUM_TO_ONE})
    probes = CUSTOM.prepare(params, check_rng(3, 1, "custom"), reference.KIND_SOFTMAX)
    sent = executor.requests[1].calls
    for probe, call in zip(probes, sent, strict=True):
        np.testing.assert_array_equal(call.args[2], probe.call.args[0])


def test_a_wrong_implementation_fails_the_custom_check_and_is_diagnosed():
    executor = InstructorCheckExecutor(softmax_unnormalized, rows_sum_to_one)
    verdict = grade(
        spec=softmax_spec(message="On {what}, the rows do not sum to 1."),
        code="student",
        seed=3,
        executor=executor,
    )
    assert verdict.status == VerdictStatus.FAILED
    custom = verdict.checks[1]
    assert not custom.passed
    assert custom.message.startswith("On x of shape") and custom.message.endswith(
        "the rows do not sum to 1."
    )
    assert "unnormalized-weights" in verdict.diagnosis


def test_a_custom_check_that_fails_alone_still_gets_the_diagnosis():
    # Rows along the last axis sum to 1, so only the custom check (on axis inputs) can fail.
    def says_no(student, expected, *inputs):
        return False

    executor = InstructorCheckExecutor(softmax_ignores_axis, says_no)
    spec = softmax_spec()
    verdict = grade(spec=spec, code="student", seed=3, executor=executor)
    assert verdict.status == VerdictStatus.FAILED
    assert [c.passed for c in verdict.checks] == [True, False]
    assert verdict.score == 0.5
    assert len(executor.requests) == 2
    assert verdict.diagnosis  # its calls rode in the student's run, in case


def test_a_broken_custom_check_is_an_internal_error_never_charged():
    executor = InstructorCheckExecutor(reference.softmax, raises)
    verdict = grade(spec=softmax_spec(), code="student", seed=3, executor=executor)
    assert verdict.status == VerdictStatus.INTERNAL_ERROR
    assert verdict.score == 0.0
    assert verdict.message == MSG_INTERNAL
    assert verdict.diagnosis == ()
    assert verdict.checks[1].message == MSG_NOT_RUN
    [(index, detail)] = verdict.check_errors
    assert index == 1
    assert "the instructor's bug" in detail
    assert "check_errors" not in verdict.to_dict()


def test_a_student_crash_is_the_students_fault_and_the_instructors_code_never_runs():
    executor = InstructorCheckExecutor(lambda x, axis=-1: 1 / 0, raises)
    verdict = grade(spec=softmax_spec(), code="student", seed=3, executor=executor)
    assert verdict.status == VerdictStatus.FAILED
    assert [r.entry_point for r in executor.requests] == ["softmax"]


# --- in Validate --------------------------------------------------------------------------------


def _validate(func):
    executor = SourceLookupExecutor(extra={ROWS_SUM_TO_ONE: func})
    spec = ExerciseSpec(
        slug="softmax-custom",
        kind=reference.KIND_SOFTMAX,
        entry_point="softmax",
        checks=(CheckSpec("custom", {"source": ROWS_SUM_TO_ONE}, label="Rows sum to 1"),),
    )
    return validate_spec(
        spec=spec, reference_source=REFERENCE_SOURCES[reference.KIND_SOFTMAX], executor=executor
    )


def test_validate_shows_what_the_custom_check_catches():
    report = _validate(rows_sum_to_one)
    assert report.reference_passed
    caught = {r.implementation for r in report.rows if r.catches("custom")}
    assert softmax_unnormalized.__name__ in caught
    assert softmax_whole_array.__name__ in caught
    assert softmax_ignores_axis.__name__ not in caught  # its last-axis rows do sum to 1
    assert not report.check_errors


def test_validate_shows_a_broken_custom_check_as_an_error_not_a_catch():
    report = _validate(raises)
    assert not report.ok
    assert not report.reference_passed
    # Unless the student's code broke first (then the check fails it, as any check would).
    internal = [r for r in report.rows if r.verdict.status == VerdictStatus.INTERNAL_ERROR]
    assert internal
    assert [r for r in report.rows if r.cell(0) == CELL_ERROR] == internal
    assert not any(r.caught or r.catches("custom") for r in internal)
    names = {name for name, _, _ in report.check_errors}
    assert "reference_solution" in names
    assert all(label == "Rows sum to 1" for _, label, _ in report.check_errors)


def test_the_readme_states_the_limits_in_force():
    readme = (Path(__file__).resolve().parents[2] / "grader" / "README.md").read_text()
    lim = limits.CUSTOM_CHECK_LIMITS
    stated = f"({lim.wall_seconds:g} s wall, {lim.cpu_seconds:g} s CPU, {lim.memory_mb} MiB)"
    assert stated in readme
