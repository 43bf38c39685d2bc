"""Ride extra calls (the pictures of a submission) along with a grade's single run.

The student's module is loaded once and its function called on the hidden inputs and then on
the pictures' inputs, in one sandbox child: one fork and one module load per submission
instead of two, and slow student code is run once, not twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from grader.engine.executors.base import (
    Call,
    CallResult,
    Executor,
    Gate,
    Limits,
    RunResult,
    RunStatus,
)


class ExtraCallsExecutor:
    """Wraps an executor: adds ``extra`` to the first run and keeps their results apart.

    The wrapped run looks to its caller exactly as if only its own calls had been made: if
    all of them finished, a limit hit during the extra calls does not change its status. With
    a gate, the extra calls go just before it (the pictures are wanted whatever the gate says),
    and the gate sees only its caller's results.
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
        gate: Gate | None = None,
    ) -> RunResult:
        if self.extra_status is not None or not self.extra:  # only the first run carries them
            return self.inner.run(
                code=code,
                entry_point=entry_point,
                calls=calls,
                limits=limits,
                while_running=while_running,
                gate=gate,
            )
        at = gate.after if gate is not None else len(calls)
        n_extra = len(self.extra)
        inner_gate = None
        if gate is not None:
            outer = gate

            def go_on(results: Sequence[CallResult]) -> bool:
                return outer.go_on(results[:at])

            progress = None
            if outer.progress is not None:
                outer_progress = outer.progress

                def progress(results: Sequence[CallResult]) -> bool:
                    return outer_progress(results[:at])

            inner_gate = Gate(
                after=at + n_extra, go_on=go_on, meanwhile=gate.meanwhile, progress=progress
            )
        result = self.inner.run(
            code=code,
            entry_point=entry_point,
            calls=[*calls[:at], *self.extra, *calls[at:]],
            limits=limits,
            while_running=while_running,
            gate=inner_gate,
        )
        self.extra_status = result.status
        self.extra_results = list(result.calls[at : at + n_extra])
        mine = [*result.calls[:at], *result.calls[at + n_extra :]]
        cut_among_extra = at <= len(result.calls) < at + n_extra
        if cut_among_extra and result.status not in (RunStatus.OK, RunStatus.INTERNAL):
            # Every graded call before the pictures finished; only the pictures were cut short
            # (and any graded calls after them never ran, as when a gate says no).
            return replace(result, status=RunStatus.OK, calls=mine, message="")
        return replace(result, calls=mine)

    def close(self) -> None:
        self.inner.close()
