"""Test doubles for executors. None of them compiles or runs source text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grader.engine import reference
from grader.engine.checks.custom import ENTRY_POINT as CUSTOM_ENTRY_POINT
from grader.engine.executors.base import LocalRun, RunRequest
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.kinds import REFERENCE_SOURCES
from grader.engine.misconceptions import WRONG_IMPLEMENTATIONS

ENTRY_POINTS = {"attention": "attention", "multi-head-attention": "multi_head_attention"}
ENTRY_POINTS["softmax"] = "softmax"
ENTRY_POINTS["softmax_backward"] = "softmax_backward"
ENTRY_POINTS["attention_backward"] = "attention_backward"
ENTRY_POINTS["demonstration"] = "scaling_demo"
REFERENCE_FUNCS = {
    "attention": reference.attention,
    "multi-head-attention": reference.multi_head_attention,
    "softmax": reference.softmax,
    "softmax_backward": reference.softmax_backward,
    "attention_backward": reference.attention_backward,
    "demonstration": reference.scaling_demonstration,
}


class SourceLookupExecutor:
    """Answers for source texts it knows (our reference and wrong implementations) by calling the
    matching trusted function: the admin's Validate can be tested without the sandbox."""

    def __init__(self, extra: dict[str, Callable[..., Any]] | None = None) -> None:
        # ``extra``: more known sources (a custom check's, standing for the instructor's code).
        self.table = {REFERENCE_SOURCES[k]: f for k, f in REFERENCE_FUNCS.items()}
        self.table.update(extra or {})
        for impl in WRONG_IMPLEMENTATIONS:
            self.table[impl.source(ENTRY_POINTS[impl.kind])] = impl.func
        self.closed = False
        self.runs = 0

    def start(self, request: RunRequest) -> LocalRun:
        self.runs += 1
        return CallableExecutor(self.table[request.code]).start(request)

    def close(self) -> None:
        self.closed = True


class InstructorCheckExecutor:
    """Runs the student's calls on ``student`` and a custom check's (entry point ``check``) on
    ``check``, both trusted test functions: grading's handling of a custom check, tested
    without the sandbox. Records every request it is given."""

    def __init__(self, student: Callable[..., Any], check: Callable[..., Any]) -> None:
        self.student = student
        self.check = check
        self.requests: list[RunRequest] = []
        # Runs started while another was open (the sandbox runs one at a time).
        self.overlapped = 0
        self._open = 0

    def start(self, request: RunRequest) -> LocalRun:
        self.requests.append(request)
        self.overlapped += self._open > 0
        self._open += 1
        func = self.check if request.entry_point == CUSTOM_ENTRY_POINT else self.student
        run = CallableExecutor(func).start(request)
        close = run.close

        def closed() -> None:
            self._open -= 1
            close()

        run.close = closed  # type: ignore[method-assign]
        return run

    def close(self) -> None:
        pass
