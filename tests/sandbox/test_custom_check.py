"""An instructor's custom check runs in the real sandbox, in a run of its own after the
student's, fenced like student code (grader.engine.checks.custom).

Every grade here goes through the fenced runner's SandboxExecutor (``sandbox.grade``): the
instructor's code below, hostile or not, never runs in the test process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.engine import reference
from grader.engine.checks.custom import MSG_NOT_RUN
from grader.engine.grading import MSG_INTERNAL, CheckSpec, ExerciseSpec
from grader.engine.kinds import REFERENCE_SOURCES
from grader.engine.kinds.softmax_mistakes import softmax_unnormalized
from grader.engine.misconceptions import WRONG_IMPLEMENTATIONS
from grader.engine.status import VerdictStatus
from tests.sandbox.conftest import CANARY, FencedSandbox

ROWS_SUM_TO_ONE = """
import numpy as np


def check(student, expected, x, *rest):
    return bool(np.allclose(student.sum(axis=-1), 1.0, atol=1e-9))
"""
REFERENCE = REFERENCE_SOURCES[reference.KIND_SOFTMAX]
UNNORMALIZED = next(i for i in WRONG_IMPLEMENTATIONS if i.func is softmax_unnormalized).source(
    "softmax"
)
# In the student's code only: the instructor's run must not find it anywhere.
STUDENT_MARKER = "student-marker-9d2e"
PROJECT_FILE = Path(__file__).resolve().parents[2] / "grader" / "engine" / "reference.py"


def spec(source: str) -> ExerciseSpec:
    return ExerciseSpec(
        slug="softmax-custom",
        kind=reference.KIND_SOFTMAX,
        entry_point="softmax",
        checks=(
            CheckSpec("softmax-values"),
            CheckSpec("custom", {"source": source}, label="Rows sum to 1"),
        ),
    )


def test_the_reference_passes_and_a_wrong_implementation_fails_it(sandbox: FencedSandbox) -> None:
    passed = sandbox.grade(spec=spec(ROWS_SUM_TO_ONE), code=REFERENCE)
    assert passed.status == VerdictStatus.PASSED, passed
    assert [c.passed for c in passed.checks] == [True, True]
    failed = sandbox.grade(spec=spec(ROWS_SUM_TO_ONE), code=UNNORMALIZED)
    assert failed.status == VerdictStatus.FAILED
    assert not failed.checks[1].passed
    assert failed.checks[1].message.startswith("On x of shape")


@pytest.mark.parametrize(
    "body,detail",
    [
        ("    return 1 / 0\n", "ZeroDivisionError"),
        ("    return 'yes'\n", "expected a numeric array"),
        ("    while True:\n        pass\n", "-limit"),  # CPU, or wall on a busy machine
        ("    return bytearray(10**10)\n", "memory"),
    ],
)
def test_a_broken_check_is_an_internal_error_with_why(
    sandbox: FencedSandbox, body: str, detail: str
) -> None:
    source = f"def check(student, expected, *inputs):\n{body}"
    verdict = sandbox.grade(spec=spec(source), code=REFERENCE)
    assert verdict.status == VerdictStatus.INTERNAL_ERROR
    assert verdict.message == MSG_INTERNAL
    assert verdict.checks[1].message == MSG_NOT_RUN
    [(index, why)] = verdict.check_errors
    assert index == 1
    assert detail in why.lower() or detail in why, why
    # The sandbox is fine afterwards: the next grade passes.
    assert sandbox.grade(spec=spec(ROWS_SUM_TO_ONE), code=REFERENCE).status == "passed"


# Every attempt must be refused (or find nothing) for the check to answer True.
FENCED = f"""
import os
import signal
import socket


def refused(attempt):
    try:
        attempt()
    except Exception:
        return True
    return False


def found_anywhere(*needles):
    for pid in ["self", *os.listdir("/proc")]:
        for name in ("environ", "cmdline"):
            try:
                data = open(f"/proc/{{pid}}/{{name}}", "rb").read()
            except OSError:
                continue
            if any(n in data for n in needles):
                return True
    return False


def check(student, expected, *inputs):
    fenced = [
        refused(lambda: open({str(PROJECT_FILE)!r}).read()),
        refused(lambda: open("/etc/shadow").read()),
        refused(lambda: open("/tmp/instructor-was-here", "w").write("x")),
        refused(lambda: os.kill(-1, signal.SIGKILL)),
        refused(lambda: os.kill(1, signal.SIGKILL)),
        refused(lambda: os.kill(os.getppid(), signal.SIGKILL)),
        refused(lambda: socket.create_connection(("127.0.0.1", 5432), timeout=1)),
        refused(lambda: os.fork()),
        not found_anywhere({CANARY.encode()!r}, {STUDENT_MARKER.encode()!r}, b"SECRET_KEY"),
        "softmax" not in globals(),
    ]
    return all(fenced)
"""

KILLS_ALL = """
import os
import signal


def check(student, expected, *inputs):
    os.kill(-1, signal.SIGKILL)
    return True
"""


def test_a_hostile_check_is_fenced_and_sees_no_student_code(sandbox: FencedSandbox) -> None:
    student = f"# {STUDENT_MARKER}\n{REFERENCE}"
    verdict = sandbox.grade(spec=spec(FENCED), code=student)
    assert verdict.status == VerdictStatus.PASSED, verdict
    assert not Path("/tmp/instructor-was-here").exists()


def test_a_check_that_kills_everything_only_breaks_itself(sandbox: FencedSandbox) -> None:
    starts = sandbox.call("self_check")
    verdict = sandbox.grade(spec=spec(KILLS_ALL), code=REFERENCE)
    assert verdict.status == VerdictStatus.INTERNAL_ERROR
    [(_, why)] = verdict.check_errors
    assert "PermissionError" in why
    assert sandbox.grade(spec=spec(ROWS_SUM_TO_ONE), code=REFERENCE).status == "passed"
    assert sandbox.call("self_check") == starts, "the zygote had to be restarted"
