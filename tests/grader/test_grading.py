"""grade(): statuses, partial credit, one batched run, JSON verdicts, replayable seeds."""

import json

import numpy as np
import pytest

from grader.engine import reference
from grader.engine.diagnosis import diagnose, fixed_probes
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
from grader.engine.grading import (
    MSG_INTERNAL,
    MSG_PASSED,
    CheckSpec,
    ExerciseSpec,
    _plan,
    grade,
    visible_message,
)
from grader.engine.kinds.attention_mistakes import attention_naive_softmax
from grader.engine.status import VerdictStatus
from tests.grader.fakes import REFERENCE_FUNCS
from tests.grader.helpers import builtin_spec


class FixedRun:
    """A stand-in executor that answers every run with one RunResult (no code runs)."""

    def __init__(self, result):
        self.result = result
        self.runs = 0

    def start(self, request):
        self.runs += 1
        return LocalRun(lambda calls: self.result, request)

    def close(self):
        pass


class CountingExecutor(CallableExecutor):
    def __init__(self, func, stop_after=None, status=RunStatus.CPU_LIMIT):
        super().__init__(func)
        self.runs = 0
        self.n_calls = 0
        self.stop_after = stop_after
        self.status = status

    def start(self, request):
        self.runs += 1
        return super().start(request)

    def _calls(self, calls):
        self.n_calls += len(calls)
        result = super()._calls(calls)
        if self.stop_after is None:
            return result
        return RunResult(
            status=self.status,
            calls=result.calls[: self.stop_after],
            message="Time limit exceeded: your code used more than 5 s of CPU time.",
        )


SPEC = builtin_spec(reference.KIND_ATTENTION)


def test_reference_passes_in_one_batched_run():
    executor = CountingExecutor(reference.attention)
    verdict = grade(spec=SPEC, code="", seed=0, executor=executor)
    assert verdict.status == VerdictStatus.PASSED
    assert verdict.score == 1.0
    assert verdict.message == MSG_PASSED.format(n=len(SPEC.checks))
    assert executor.runs == 1
    # Only the checks' calls: a passing submission has no second phase.
    _, calls, diag = _plan(SPEC, 0)
    assert executor.n_calls == len(calls) - len(diag)


def test_partial_credit_is_weighted():
    verdict = grade(spec=SPEC, code="", seed=0, executor=CallableExecutor(attention_naive_softmax))
    assert verdict.status == VerdictStatus.FAILED
    failed = [c for c in verdict.checks if not c.passed]
    assert [c.name for c in failed] == ["stability"]
    total = sum(c.weight for c in verdict.checks)
    assert abs(verdict.score - (total - failed[0].weight) / total) < 1e-12
    assert verdict.diagnosis == ("unstable-softmax",)


def test_verdict_is_json_and_matches_submission_fields():
    verdict = grade(spec=SPEC, code="", seed=0, executor=CallableExecutor(attention_naive_softmax))
    data = json.loads(json.dumps(verdict.to_dict()))
    assert set(data) == {"status", "score", "checks", "diagnosis", "message", "stdout"}
    assert set(data["checks"][0]) == {"name", "label", "passed", "message", "weight", "visibility"}
    assert data["checks"][0]["label"]  # the library's label when the spec has none


def test_same_seed_same_verdict_other_seed_other_inputs():
    a = grade(spec=SPEC, code="", seed=42, executor=CallableExecutor(attention_naive_softmax))
    b = grade(spec=SPEC, code="", seed=42, executor=CallableExecutor(attention_naive_softmax))
    assert a == b


def test_nothing_ran_is_an_error_with_the_executor_message():
    for status, message in (
        (RunStatus.SYNTAX_ERROR, "Syntax error on line 3: invalid syntax"),
        (RunStatus.MISSING_ENTRY_POINT, "Your code does not define a function named `attention`."),
        (
            RunStatus.IMPORT_ERROR,
            "Your code raised an exception while being loaded:\nZeroDivisionError",
        ),
        (RunStatus.WALL_LIMIT, "Time limit exceeded"),
    ):
        executor = FixedRun(RunResult(status=status, calls=[], message=message, stdout="hi\n"))
        verdict = grade(spec=SPEC, code="x", seed=0, executor=executor)
        assert verdict.status == VerdictStatus.ERROR
        assert verdict.score == 0.0
        assert verdict.message == message
        assert verdict.stdout == "hi\n"
        assert executor.runs == 1


def test_internal_is_never_charged():
    executor = FixedRun(RunResult(status=RunStatus.INTERNAL, calls=[], message="zygote died"))
    verdict = grade(spec=SPEC, code="x", seed=0, executor=executor)
    assert verdict.status == VerdictStatus.INTERNAL_ERROR
    assert verdict.message == MSG_INTERNAL


def test_executor_exception_is_internal():
    class Broken(FixedRun):
        def start(self, request):
            raise OSError("pipe closed")

    verdict = grade(spec=SPEC, code="x", seed=0, executor=Broken(None))
    assert verdict.status == VerdictStatus.INTERNAL_ERROR


def test_limit_before_any_check_completes_is_error():
    # The first check (worked example) has one call; stopping after 0 calls judges nothing.
    executor = CountingExecutor(reference.attention, stop_after=0)
    verdict = grade(spec=SPEC, code="", seed=0, executor=executor)
    assert verdict.status == VerdictStatus.ERROR
    assert verdict.message.startswith("Time limit exceeded")


def test_limit_part_way_fails_the_unfinished_checks():
    executor = CountingExecutor(reference.attention, stop_after=3)
    verdict = grade(spec=SPEC, code="", seed=0, executor=executor)
    assert verdict.status == VerdictStatus.FAILED
    assert verdict.checks[0].passed  # the worked example finished
    assert not verdict.checks[-1].passed
    assert "could not run" in verdict.checks[-1].message
    assert 0 < verdict.score < 1


def test_wrong_number_of_results_is_internal():
    executor = FixedRun(
        RunResult(status=RunStatus.OK, calls=[CallResult(output=np.zeros(1))] * 999)
    )
    assert (
        grade(spec=SPEC, code="", seed=0, executor=executor).status == VerdictStatus.INTERNAL_ERROR
    )


def test_bad_params_are_internal_not_the_students_fault():
    spec = ExerciseSpec(
        slug="x",
        kind="attention",
        entry_point="attention",
        checks=(CheckSpec("scale", {"d_ks": "x"}),),
    )
    verdict = grade(spec=spec, code="", seed=0, executor=CallableExecutor(reference.attention))
    assert verdict.status == VerdictStatus.INTERNAL_ERROR
    bad_checks = (
        (CheckSpec("scale", [1, 2]),),
        (CheckSpec("no-such-check"),),
        (CheckSpec("softmax-axis"),),  # a softmax check on an attention exercise
    )
    for checks in bad_checks:
        spec = ExerciseSpec(slug="x", kind="attention", entry_point="attention", checks=checks)
        executor = CallableExecutor(reference.attention)
        assert (
            grade(spec=spec, code="", seed=0, executor=executor).status
            == VerdictStatus.INTERNAL_ERROR
        )


def test_no_checks_is_an_error():
    spec = ExerciseSpec(slug="x", kind="attention", entry_point="attention", checks=())
    verdict = grade(spec=spec, code="", seed=0, executor=CallableExecutor(reference.attention))
    assert verdict.status == VerdictStatus.ERROR


def test_passing_submission_is_never_diagnosed():
    verdict = grade(spec=SPEC, code="", seed=0, executor=CallableExecutor(reference.attention))
    assert verdict.diagnosis == ()


def test_visibility_of_messages():
    check = {"message": "m", "visibility": "shown"}
    assert visible_message(check=check, deadline_passed=False) == "m"
    assert visible_message(check={**check, "visibility": "hidden"}, deadline_passed=True) is None
    after = {**check, "visibility": "after-deadline"}
    assert visible_message(check=after, deadline_passed=False) is None
    assert visible_message(check=after, deadline_passed=True) == "m"


def test_limits_are_passed_to_the_executor():
    seen = {}

    class Spy(CallableExecutor):
        def start(self, request):
            seen.update(code=request.code, entry_point=request.entry_point, limits=request.limits)
            return super().start(request)

    spec = ExerciseSpec(
        slug="x",
        kind="attention",
        entry_point="attention",
        checks=(CheckSpec("worked-example"),),
        limits=Limits(wall_seconds=3, cpu_seconds=2, memory_mb=256),
    )
    grade(spec=spec, code="src", seed=0, executor=Spy(reference.attention))
    assert seen == {"code": "src", "entry_point": "attention", "limits": spec.limits}


# --- the second phase: a passing submission is not run on the diagnosis's inputs ------------


def counted(func):
    calls = []

    def wrapper(*args, **kwargs):
        calls.append(1)
        return func(*args, **kwargs)

    return wrapper, calls


def test_a_passing_submission_is_never_run_on_the_diagnosis_inputs():
    spec = builtin_spec(reference.KIND_ATTENTION)
    func, calls = counted(reference.attention)
    verdict = grade(spec=spec, code="", seed=3, executor=CallableExecutor(func))
    _, planned_calls, diag = _plan(spec, 3)
    assert verdict.status == VerdictStatus.PASSED
    assert len(calls) == len(planned_calls) - len(diag)
    assert len(diag) == len(fixed_probes(reference.KIND_ATTENTION)) > 20


def test_a_failing_submission_runs_the_diagnosis_calls_in_the_same_run():
    spec = builtin_spec(reference.KIND_ATTENTION)
    func, calls = counted(attention_naive_softmax)
    passing, passing_calls = counted(reference.attention)
    grade(spec=spec, code="", seed=3, executor=CallableExecutor(passing))
    executor = CountingExecutor(func)
    verdict = grade(spec=spec, code="", seed=3, executor=executor)
    assert verdict.status == VerdictStatus.FAILED and verdict.diagnosis
    assert executor.runs == 1
    assert len(calls) == len(passing_calls) + len(fixed_probes(reference.KIND_ATTENTION))


# The demonstration's hidden inputs are the largest (heads up to 262,144 wide): about as long
# as every other kind together, so the inner loop (`make test-fast`) leaves it to `make test`.
@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(k, marks=pytest.mark.slow) if k == reference.KIND_DEMONSTRATION else k
        for k in REFERENCE_FUNCS
    ],
)
def test_the_second_phase_names_what_every_call_at_once_would(kind):
    """The diagnosis from the second phase's calls is the one named from all of them run at
    once, for every catalogued mistake of the kind (and none for what passes)."""
    from grader.engine.misconceptions import WRONG_IMPLEMENTATIONS

    funcs = [(kind, REFERENCE_FUNCS[kind])]
    funcs += [(impl.kind, impl.func) for impl in WRONG_IMPLEMENTATIONS if impl.kind == kind]
    for kind, func in funcs:
        spec = builtin_spec(kind)
        verdict = grade(spec=spec, code="", seed=11, executor=CallableExecutor(func))
        probes = fixed_probes(kind)
        at_once = CallableExecutor(func).start(
            RunRequest("", spec.entry_point, tuple(p.call for p in probes))
        )
        named = tuple(diagnose(kind, probes, at_once.wait().calls))
        expected = named if verdict.status == VerdictStatus.FAILED else ()
        assert verdict.diagnosis == expected, (kind, func)


# --- the pictures: part of the plan, their results apart from the checks' ----------------------


def test_the_pictures_results_come_apart_and_change_no_verdict():
    pictures = [Call(args=(np.full(2, float(i)),)) for i in range(3)]
    for func in (reference.attention, attention_naive_softmax):
        plain = grade(spec=SPEC, code="", seed=5, executor=CallableExecutor(func))
        with_pictures = grade(
            spec=SPEC, code="", seed=5, executor=CallableExecutor(func), pictures=pictures
        )
        assert plain == with_pictures and plain.pictures == ()
        assert len(with_pictures.pictures) == 3


def test_a_limit_hit_among_the_pictures_leaves_the_checks_verdict():
    _, calls, diag = _plan(SPEC, 5)
    n_check = len(calls) - len(diag)
    pictures = [Call(args=(np.zeros(2),))] * 3
    executor = CountingExecutor(reference.attention, stop_after=n_check + 1)
    verdict = grade(spec=SPEC, code="", seed=5, executor=executor, pictures=pictures)
    assert verdict.status == VerdictStatus.PASSED
    assert len(verdict.pictures) == 1
