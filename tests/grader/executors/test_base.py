"""The executor boundary: a run's endings map to verdict statuses, and a local run's phases."""

import numpy as np
import pytest

from grader.engine.executors.base import (
    STUDENT_FAULT_STATUSES,
    Call,
    RunRequest,
    RunStatus,
    run_whole,
)
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.status import VerdictStatus


def test_every_run_ending_maps_to_one_verdict_status():
    assert RunStatus.OK.verdict is None  # the checks judge the outputs
    assert RunStatus.INTERNAL.verdict == VerdictStatus.INTERNAL_ERROR
    for status in set(RunStatus) - {RunStatus.OK, RunStatus.INTERNAL}:
        assert status.verdict == VerdictStatus.ERROR, status
    assert set(RunStatus) - {RunStatus.OK, RunStatus.INTERNAL} == STUDENT_FAULT_STATUSES


def calls(*values: float) -> tuple[Call, ...]:
    return tuple(Call(args=(np.full(2, v),)) for v in values)


def test_a_second_phase_adds_its_results_after_the_first():
    executor = CallableExecutor(lambda x: x * 2)
    with executor.start(RunRequest("", "f", calls(1, 2), second_phase=True)) as run:
        assert [c.output[0] for c in run.wait().calls] == [2, 4]
        run.more(calls(3))
        assert [c.output[0] for c in run.wait().calls] == [2, 4, 6]
        with pytest.raises(RuntimeError):
            run.more(calls(4))  # once only


def test_no_second_phase_unless_the_request_allows_it():
    run = CallableExecutor(lambda x: x).start(RunRequest("", "f", calls(1)))
    with pytest.raises(RuntimeError):
        run.more(calls(2))


def test_run_whole_is_one_phase():
    result = run_whole(CallableExecutor(lambda x: x + 1), RunRequest("", "f", calls(1, 2)))
    assert result.status == RunStatus.OK and len(result.calls) == 2
