"""The executor boundary: the only thing that crosses it is arrays and plain scalars.

No Django imports here: the sandbox and the pure grading maths depend on this module.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from grader.engine.status import VerdictStatus

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

    @property
    def verdict(self) -> VerdictStatus | None:
        """The verdict this ending decides by itself: None for OK (the checks judge the
        outputs), INTERNAL_ERROR for ours, ERROR for every way the student's code stopped."""
        return _RUN_VERDICTS.get(self, VerdictStatus.ERROR)


_RUN_VERDICTS: dict[RunStatus, VerdictStatus | None] = {
    RunStatus.OK: None,
    RunStatus.INTERNAL: VerdictStatus.INTERNAL_ERROR,
}

# Statuses that mean the student's code is at fault (as opposed to INTERNAL).
STUDENT_FAULT_STATUSES = frozenset(s for s in RunStatus if s.verdict == VerdictStatus.ERROR)


# numpy's words when a returned tuple's arrays differ in shape (the attention backward's
# (dQ, dK, dV) with one gradient misshapen): the sandbox reads a return value as one array,
# outside the student's frames, so the error quotes no line of theirs.
RAGGED_RETURN = "inhomogeneous shape"


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
class RunRequest:
    """One run of a student's module: load ``code``, then call ``entry_point`` on each call.

    ``second_phase``: the caller may ask for more calls on the same loaded module once these
    are done (``Run.more``, at most once). The grade uses it so that a submission that passes
    every check is not also run on the diagnosis's inputs: only failing code needs its
    misconception named, and a second child would pay the fork and the module load again.
    """

    code: str
    entry_point: str
    calls: tuple[Call, ...]
    limits: Limits = field(default_factory=Limits)
    second_phase: bool = False


class Run(Protocol):
    """A run in progress. The caller drives it; the executor never calls back.

    ``wait`` blocks until every call handed over so far is done (or, with ``at_least``, that
    many), or the run ended (a limit, a crash), and returns the results so far in order: fewer
    than ``at_least`` only if the run ended. ``more`` hands over a second
    phase of calls (only if the request allowed it, only after ``wait`` returned OK, at most
    once) and returns at once: the caller's trusted work then overlaps with them, and ``wait``
    collects them. ``close`` ends the run; a run is also a context manager that closes it.
    """

    def wait(self, at_least: int | None = None) -> RunResult: ...

    def more(self, calls: Sequence[Call]) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Run: ...

    def __exit__(self, *exc: object) -> None: ...


class Executor(Protocol):
    """Runs untrusted code somewhere that is not this process, and returns only outputs.

    ``start`` hands the request over and returns once the calls are on their way: trusted work
    the caller does before ``Run.wait`` (the reference outputs) then costs no wall-clock time.
    """

    def start(self, request: RunRequest) -> Run: ...

    def close(self) -> None: ...


def run_whole(executor: Executor, request: RunRequest) -> RunResult:
    """Every call of ``request`` in one run, for callers with no second phase."""
    with executor.start(request) as run:
        return run.wait()


class LocalRun:
    """A run computed here, one phase at a time, by ``compute`` (the executor's own function
    from calls to their result): for executors that run nothing elsewhere, so nothing overlaps."""

    def __init__(self, compute: Callable[[Sequence[Call]], RunResult], request: RunRequest):
        self._compute = compute
        self._second_phase = request.second_phase
        self._result = compute(request.calls)

    def wait(self, at_least: int | None = None) -> RunResult:
        return self._result

    def more(self, calls: Sequence[Call]) -> None:
        if not self._second_phase or self._result.status != RunStatus.OK:
            raise RuntimeError("no second phase for this run")
        self._second_phase = False
        then = self._compute(calls)
        self._result = replace(then, calls=[*self._result.calls, *then.calls])

    def close(self) -> None:
        pass

    def __enter__(self) -> LocalRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
