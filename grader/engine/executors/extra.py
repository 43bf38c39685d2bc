"""The pictures' calls attached to an executor, in the shape grader.services still passes.

The pictures are part of the grade's plan now (``grade(..., pictures=...)``, results in
``Verdict.pictures``): this wrapper runs nothing itself. ``grade`` unwraps it, runs the calls
with the checks' and puts their results in ``extra_results``. Remove it once its caller passes
``pictures`` to ``grade`` directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from grader.engine.executors.base import Call, CallResult, RunRequest

if TYPE_CHECKING:
    from grader.engine.executors.base import Executor, Run


class ExtraCallsExecutor:
    """``inner`` with the pictures' ``extra`` calls, for one ``grade``."""

    def __init__(self, inner: Executor, extra: Sequence[Call]) -> None:
        self.inner = inner
        self.extra = tuple(extra)
        self.extra_results: list[CallResult] = []

    def start(self, request: RunRequest) -> Run:
        return self.inner.start(request)

    def close(self) -> None:
        self.inner.close()
