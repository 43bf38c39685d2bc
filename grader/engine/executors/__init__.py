"""Executors compute a student function's outputs on given inputs; they never judge them.

The checks (trusted code in ``engine.checks``) decide pass/fail from what an executor returns,
outside the process that ran the student's code.
"""

from grader.engine.executors.base import Call, CallResult, Executor, Limits, RunResult, RunStatus

__all__ = ["Call", "CallResult", "Executor", "Limits", "RunResult", "RunStatus"]
