"""The executor boundary: the only thing that crosses it is arrays and plain scalars.

No Django imports here: the sandbox and the pure grading maths depend on this module.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

# A call argument: arrays cross as .npy bytes; the rest as JSON scalars.
Arg = np.ndarray | int | float | bool | None


@dataclass(frozen=True)
class Call:
    """One call of the student's entry point, ``entry_point(*args, **kwargs)``."""

    args: tuple[Arg, ...]
    kwargs: dict[str, Arg] = field(default_factory=dict)
    # Send the array arguments back after the call, so trusted code can see whether they were
    # mutated. Off by default: it doubles the bytes that cross the boundary.
    return_inputs: bool = False


@dataclass(frozen=True)
class Limits:
    """Per-grade limits. Defaults and bounds are documented in ``grader.engine.limits``."""

    wall_seconds: float = 10.0
    cpu_seconds: float = 5.0
    memory_mb: int = 512


class RunStatus(enum.StrEnum):
    """How a run of the student's module ended, as a whole."""

    OK = "ok"  # the module loaded; every call has a CallResult
    SYNTAX_ERROR = "syntax-error"
    MISSING_ENTRY_POINT = "missing-entry-point"
    IMPORT_ERROR = "import-error"  # the module raised while being loaded
    CPU_LIMIT = "cpu-limit"
    WALL_LIMIT = "wall-limit"
    MEMORY_LIMIT = "memory-limit"
    OUTPUT_LIMIT = "output-limit"
    SIGNALED = "signaled"  # killed by a signal we did not send (segfault, abort, ...)
    EXITED = "exited"  # sys.exit / os._exit before answering
    BAD_OUTPUT = "bad-output"  # the child's reply broke the protocol or a size bound
    INTERNAL = "internal"  # our fault (the sandbox broke): never charged to the student


# Statuses that mean the student's code is at fault (as opposed to INTERNAL).
STUDENT_FAULT_STATUSES = frozenset(RunStatus) - {RunStatus.OK, RunStatus.INTERNAL}


@dataclass(frozen=True)
class CallResult:
    """The outcome of one call. Exactly one of ``output`` and ``error`` is set."""

    output: np.ndarray | None = None
    # Student-facing text: the traceback of the student's own frames, or why the value
    # returned is not a numeric array.
    error: str | None = None
    inputs_after: tuple[np.ndarray, ...] | None = None


@dataclass(frozen=True)
class RunResult:
    status: RunStatus
    # One result per Call, in order, for the calls that finished. When a limit ends the run
    # part-way, the calls before it keep their results and the rest are missing.
    calls: list[CallResult]
    # A clear, student-facing message when status is not OK (line and message for a syntax
    # error, which limit was hit, ...). For INTERNAL, a generic message; details go to the log.
    message: str = ""
    # What the student's code printed, capped; shown escaped.
    stdout: str = ""


@dataclass(frozen=True)
class Gate:
    """The calls after the first ``after`` run only if ``go_on`` says so.

    ``go_on`` is the caller's trusted code, given the first ``after`` results once they are all
    in. The grade uses it so that a submission that passes every check is not also run on the
    diagnosis's inputs (28 calls of 50): only failing code needs its misconception named. When
    ``go_on`` says no, the run ends there with status OK and ``after`` results. A run that
    stops before the gate never asks. When it says yes, ``meanwhile`` (the caller's trusted
    work, like ``while_running``) runs once while the calls after the gate compute. An
    executor may also hand ``progress`` the results so far, now and then, while the calls
    before the gate compute (the grade judges the checks that are complete); when it returns
    True the caller wants the calls after the gate whatever comes, and the executor may send
    them ahead (``go_on`` is still asked, but cannot take them back). An executor may ignore
    the gate and run every call.
    """

    after: int
    go_on: Callable[[Sequence[CallResult]], bool]
    meanwhile: Callable[[], None] | None = None
    progress: Callable[[Sequence[CallResult]], bool] | None = None


class Executor(Protocol):
    """Runs untrusted code somewhere that is not this process, and returns only outputs.

    ``while_running``, if given, is called once with the calls handed over and not yet done:
    trusted work of the caller's (the reference outputs) that then costs no wall-clock time.
    ``gate``, if given, may end the run early (see ``Gate``).
    """

    def run(
        self,
        *,
        code: str,
        entry_point: str,
        calls: Sequence[Call],
        limits: Limits,
        while_running: Callable[[], None] | None = None,
        gate: Gate | None = None,
    ) -> RunResult: ...

    def close(self) -> None: ...
