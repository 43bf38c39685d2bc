"""ExtraCallsExecutor: the pictures ride along in the grade's one run, invisibly to grading."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from grader.engine.executors.base import Call, CallResult, Gate, Limits, RunResult, RunStatus
from grader.engine.executors.extra import ExtraCallsExecutor
from grader.engine.executors.trusted import CallableExecutor


class Recording:
    """Counts runs of a trusted executor, and can pretend a limit hit after ``cut`` calls."""

    def __init__(self, cut: int | None = None) -> None:
        self.inner = CallableExecutor(lambda x: x * 2)
        self.runs: list[int] = []
        self.gates: list[int | None] = []
        self.cut = cut

    def run(
        self,
        *,
        code: str,
        entry_point: str,
        calls: Sequence[Call],
        limits: Limits,
        while_running: Callable[[], None] | None = None,
        gate: Gate | None = None,
    ) -> RunResult:
        self.runs.append(len(calls))
        self.gates.append(gate.after if gate is not None else None)
        result = self.inner.run(
            code=code, entry_point=entry_point, calls=calls, limits=limits, gate=gate
        )
        if self.cut is None:
            return result
        return RunResult(RunStatus.WALL_LIMIT, result.calls[: self.cut], "Wall-clock limit.")

    def close(self) -> None:
        pass


def calls(*values: float) -> list[Call]:
    return [Call(args=(np.array([v]),)) for v in values]


def outputs(results: Sequence[CallResult]) -> list[float]:
    return [float(r.output[0]) for r in results]  # type: ignore[index]


def run(executor: ExtraCallsExecutor, *values: float) -> RunResult:
    return executor.run(code="", entry_point="f", calls=calls(*values), limits=Limits())


def test_one_run_carries_both_and_each_side_sees_only_its_own() -> None:
    inner = Recording()
    ex = ExtraCallsExecutor(inner, calls(10, 20))
    result = run(ex, 1, 2, 3)
    assert inner.runs == [5]
    assert outputs(result.calls) == [2, 4, 6]
    assert outputs(ex.extra_results) == [20, 40]
    assert result.status == RunStatus.OK


def test_only_the_first_run_carries_the_extra_calls() -> None:
    inner = Recording()
    ex = ExtraCallsExecutor(inner, calls(10))
    run(ex, 1)
    run(ex, 1)
    assert inner.runs == [2, 1]


def test_a_limit_hit_during_the_extra_calls_does_not_touch_the_grade() -> None:
    ex = ExtraCallsExecutor(Recording(cut=3), calls(10, 20))
    result = run(ex, 1, 2)
    assert result.status == RunStatus.OK and result.message == ""
    assert outputs(result.calls) == [2, 4]
    assert outputs(ex.extra_results) == [20]
    assert ex.extra_status == RunStatus.WALL_LIMIT


def test_a_limit_hit_during_the_graded_calls_is_reported_as_is() -> None:
    ex = ExtraCallsExecutor(Recording(cut=1), calls(10))
    result = run(ex, 1, 2)
    assert result.status == RunStatus.WALL_LIMIT
    assert outputs(result.calls) == [2]
    assert ex.extra_results == []


def gated(executor: ExtraCallsExecutor, answer: bool, *values: float, after: int) -> RunResult:
    seen: list[list[float]] = []

    def go_on(results: Sequence[CallResult]) -> bool:
        seen.append(outputs(results))
        return answer

    result = executor.run(
        code="",
        entry_point="f",
        calls=calls(*values),
        limits=Limits(),
        gate=Gate(after=after, go_on=go_on),
    )
    assert seen == [[2 * v for v in values[:after]]]  # the gate sees only the grade's calls
    return result


def test_with_a_gate_the_extra_calls_go_before_it_and_the_gate_sees_only_the_grade() -> None:
    inner = Recording()
    ex = ExtraCallsExecutor(inner, calls(10, 20))
    result = gated(ex, True, 1, 2, 3, after=2)
    assert inner.runs == [5] and inner.gates == [4]
    assert outputs(result.calls) == [2, 4, 6]
    assert outputs(ex.extra_results) == [20, 40]


def test_a_gate_that_says_no_still_gets_the_pictures() -> None:
    ex = ExtraCallsExecutor(Recording(), calls(10, 20))
    result = gated(ex, False, 1, 2, 3, after=2)
    assert result.status == RunStatus.OK
    assert outputs(result.calls) == [2, 4]
    assert outputs(ex.extra_results) == [20, 40]


def test_a_limit_among_the_extra_calls_before_a_gate_keeps_the_grade_ok() -> None:
    # 2 graded, then the pictures (cut after the first), then 1 graded after the gate.
    ex = ExtraCallsExecutor(Recording(cut=3), calls(10, 20))
    result = gated(ex, True, 1, 2, 3, after=2)
    assert result.status == RunStatus.OK and result.message == ""
    assert outputs(result.calls) == [2, 4]
    assert outputs(ex.extra_results) == [20]
