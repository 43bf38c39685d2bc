"""ExtraCallsExecutor: the pictures ride along in the grade's one run, invisibly to grading."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from grader.engine.executors.base import Call, CallResult, Limits, RunResult, RunStatus
from grader.engine.executors.extra import ExtraCallsExecutor
from grader.engine.executors.trusted import CallableExecutor


class Recording:
    """Counts runs of a trusted executor, and can pretend a limit hit after ``cut`` calls."""

    def __init__(self, cut: int | None = None) -> None:
        self.inner = CallableExecutor(lambda x: x * 2)
        self.runs: list[int] = []
        self.cut = cut

    def run(
        self,
        *,
        code: str,
        entry_point: str,
        calls: Sequence[Call],
        limits: Limits,
        while_running: Callable[[], None] | None = None,
    ) -> RunResult:
        self.runs.append(len(calls))
        result = self.inner.run(code=code, entry_point=entry_point, calls=calls, limits=limits)
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
