"""An in-process executor for TRUSTED Python callables: our reference and known wrong functions.

It exists so the checks and the diagnosis can be unit-tested without the sandbox. It takes a
callable, never source code: it cannot run a student's submission, and must never be used to.
It copies every argument (the sandbox sends copies too), so in-place changes made by the callable
are seen through ``inputs_after`` exactly as they would be through the sandbox.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from grader.engine.executors.base import (
    Call,
    CallResult,
    LocalRun,
    RunRequest,
    RunResult,
    RunStatus,
)
from grader.engine.sandbox.messages import MSG_NOT_NUMERIC

# The sandbox's own words for a non-array return, so a test reads like a real verdict.
NOT_AN_ARRAY = MSG_NOT_NUMERIC


def _copy(arg: Any) -> Any:
    return arg.copy() if isinstance(arg, np.ndarray) else arg


class CallableExecutor:
    """Runs ``func`` on each call, here, in this process. For trusted functions only."""

    def __init__(self, func: Callable[..., Any]) -> None:
        if not callable(func):
            raise TypeError("CallableExecutor takes a trusted callable, not source code")
        self.func = func

    def start(self, request: RunRequest) -> LocalRun:
        # The request's code and entry point are ignored on purpose: this never compiles text.
        return LocalRun(self._calls, request)

    def run(self, request: RunRequest) -> RunResult:
        """Every call of ``request``, at once."""
        return self._calls(request.calls)

    def _calls(self, calls: Sequence[Call]) -> RunResult:
        return RunResult(status=RunStatus.OK, calls=[self._one(call) for call in calls])

    def _one(self, call: Call) -> CallResult:
        args = tuple(_copy(a) for a in call.args)
        kwargs = {k: _copy(v) for k, v in call.kwargs.items()}
        try:
            with np.errstate(all="ignore"):  # overflow warnings are the point of some functions
                out = self.func(*args, **kwargs)
        except Exception as exc:  # the callable's own failure, reported like the sandbox does
            text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            return CallResult(error=text)
        inputs_after = None
        if call.return_inputs:
            inputs_after = tuple(a for a in args if isinstance(a, np.ndarray))
        if isinstance(out, np.ndarray) and out.dtype.kind in "biuf":
            return CallResult(output=out.copy(), inputs_after=inputs_after)
        try:
            arr = np.asarray(out)
        except Exception:
            arr = None
        if arr is None or arr.dtype.kind not in "biuf":
            dtype = "none" if arr is None else str(arr.dtype)
            return CallResult(error=NOT_AN_ARRAY.format(type=type(out).__name__, dtype=dtype))
        return CallResult(output=arr, inputs_after=inputs_after)

    def close(self) -> None:
        pass
