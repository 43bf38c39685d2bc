"""Executors compute a student function's outputs on given inputs; they never judge them.

The checks (trusted code in ``engine.checks``) decide pass/fail from what an executor returns,
outside the process that ran the student's code. An executor never calls back into its caller:
the caller drives a run (``Executor.start`` -> ``Run``).
"""

from grader.engine.executors.base import (
    Call,
    CallResult,
    Executor,
    Limits,
    Run,
    RunRequest,
    RunResult,
    RunStatus,
    run_whole,
)

__all__ = [
    "Call",
    "CallResult",
    "Executor",
    "Limits",
    "Run",
    "RunRequest",
    "RunResult",
    "RunStatus",
    "run_whole",
]
