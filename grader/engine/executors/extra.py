"""Ride extra calls (the pictures of a submission) along with a grade's single run.

The student's module is loaded once and its function called on the hidden inputs and then on
the pictures' inputs, in one sandbox child: one fork and one module load per submission
instead of two, and slow student code is run once, not twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from grader.engine.executors.base import Call, CallResult, Executor, Limits, RunResult, RunStatus


class ExtraCallsExecutor:
    """Wraps an executor: appends ``extra`` to the first run and keeps their results apart.

    The wrapped run looks to its caller exactly as if only its own calls had been made: if
    all of them finished, a limit hit during the extra calls does not change its status.
    """

    def __init__(self, inner: Executor, extra: Sequence[Call]) -> None:
        self.inner = inner
        self.extra = list(extra)
        self.extra_results: list[CallResult] = []
        self.extra_status: RunStatus | None = None

    def run(
        self,
        *,
        code: str,
        entry_point: str,
        calls: Sequence[Call],
        limits: Limits,
        while_running: Callable[[], None] | None = None,
    ) -> RunResult:
        if self.extra_status is not None or not self.extra:  # only the first run carries them
            return self.inner.run(
                code=code,
                entry_point=entry_point,
                calls=calls,
                limits=limits,
                while_running=while_running,
            )
        n = len(calls)
        result = self.inner.run(
            code=code,
            entry_point=entry_point,
            calls=[*calls, *self.extra],
            limits=limits,
            while_running=while_running,
        )
        self.extra_status = result.status
        self.extra_results = list(result.calls[n:])
        if len(result.calls) >= n and result.status not in (RunStatus.OK, RunStatus.INTERNAL):
            # Every graded call finished; only the pictures were cut short.
            return replace(result, status=RunStatus.OK, calls=list(result.calls[:n]), message="")
        return replace(result, calls=list(result.calls[:n]))

    def close(self) -> None:
        self.inner.close()
