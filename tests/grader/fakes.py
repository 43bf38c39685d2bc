"""Test doubles for executors. None of them compiles or runs source text."""

from __future__ import annotations

from grader.engine import reference
from grader.engine.executors.base import LocalRun, RunRequest
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.kinds import REFERENCE_SOURCES
from grader.engine.misconceptions import WRONG_IMPLEMENTATIONS

ENTRY_POINTS = {"attention": "attention", "multi-head-attention": "multi_head_attention"}
ENTRY_POINTS["softmax"] = "softmax"
REFERENCE_FUNCS = {
    "attention": reference.attention,
    "multi-head-attention": reference.multi_head_attention,
    "softmax": reference.softmax,
}


class SourceLookupExecutor:
    """Answers for source texts it knows (our reference and wrong implementations) by calling the
    matching trusted function: the admin's Validate can be tested without the sandbox."""

    def __init__(self) -> None:
        self.table = {REFERENCE_SOURCES[k]: f for k, f in REFERENCE_FUNCS.items()}
        for impl in WRONG_IMPLEMENTATIONS:
            self.table[impl.source(ENTRY_POINTS[impl.kind])] = impl.func
        self.closed = False
        self.runs = 0

    def start(self, request: RunRequest) -> LocalRun:
        self.runs += 1
        return CallableExecutor(self.table[request.code]).start(request)

    def close(self) -> None:
        self.closed = True
