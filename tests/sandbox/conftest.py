"""Fixtures of the sandbox tests: one fenced SandboxExecutor for the whole session.

Every run of student code (benign or hostile) goes through ``sandbox``, a proxy to a
SandboxExecutor living in tests/sandbox/runner.py inside its own pid namespace and pids cgroup
(fence.py). Missing bubblewrap is a failure, not a skip: `make test` installs it.
"""

from __future__ import annotations

import os
import pickle
import select
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader.engine.executors.base import Call, Limits, RunResult
from grader.engine.grading import ExerciseSpec, Verdict
from tests.sandbox import fence

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "runner.py"
# Planted in the runner's environment (the process that starts bubblewrap): no sandboxed code
# may ever find it in any /proc/*/environ.
CANARY = "sandbox-canary-3f1c9a7e5d"


class FencedSandbox:
    """Talks to the fenced runner; same run() signature as the Executor protocol."""

    def __init__(self) -> None:
        self.group = fence.make_cgroup()
        env = dict(os.environ, SANDBOX_TEST_CANARY=CANARY)
        self.proc = fence.popen_fenced(
            [sys.executable, str(RUNNER)],
            self.group,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.last_seconds = 0.0
        self.zygote_starts = 0

    def call(self, op: str, timeout: float = 120.0, **kwargs: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        data = pickle.dumps((op, kwargs))
        self.proc.stdin.write(len(data).to_bytes(8, "little") + data)
        self.proc.stdin.flush()
        head = self._read(8, timeout)
        status, reply = pickle.loads(self._read(int.from_bytes(head, "little"), timeout))
        if status != "ok":
            raise RuntimeError(f"fenced runner: {reply}")
        return reply

    def _read(self, n: int, timeout: float) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        out = bytearray()
        while len(out) < n:
            r, _, _ = select.select([fd], [], [], timeout)
            if not r:
                raise TimeoutError("fenced runner did not answer")
            chunk = os.read(fd, min(n - len(out), 1 << 24))
            if not chunk:
                raise RuntimeError(f"fenced runner died (exit {self.proc.wait()})")
            out += chunk
        return bytes(out)

    def start(self, **kwargs: Any) -> None:
        self.call("start", **kwargs)

    def run(
        self, *, code: str, entry_point: str, calls: Sequence[Call], limits: Limits = Limits()
    ) -> RunResult:
        result, seconds, starts = self.call(
            "run", code=code, entry_point=entry_point, calls=list(calls), limits=limits
        )
        self.last_seconds = seconds
        self.zygote_starts = starts
        return result

    def grade(self, *, spec: ExerciseSpec, code: str, seed: int = 0) -> Verdict:
        """``grading.grade`` in the fenced runner, through its SandboxExecutor."""
        return self.call("grade", spec=spec, code=code, seed=seed)

    def close(self) -> None:
        try:
            self.call("close", timeout=30)
        finally:
            if self.proc.stdin:
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            fence.remove_cgroup(self.group)


@pytest.fixture(scope="session")
def sandbox() -> Iterator[FencedSandbox]:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed; `make install` installs it")
    box = FencedSandbox()
    try:
        box.start()
        yield box
    finally:
        box.close()


# --- a correct attention and calls to grade it on ------------------------------------------------

CORRECT_ATTENTION = """
import numpy as np


def attention(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ V
"""


def reference_attention(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray | None = None
) -> np.ndarray:
    ns: dict[str, Any] = {}
    exec(CORRECT_ATTENTION, ns)  # trusted test code, not student code
    return ns["attention"](Q, K, V, mask)


def small_calls(n: int = 3, seed: int = 0) -> list[Call]:
    rng = np.random.default_rng(seed)
    return [Call(args=tuple(rng.normal(size=(8, 64)) for _ in range(3))) for _ in range(n)]


def assert_correct(result: RunResult, calls: Sequence[Call]) -> None:
    assert result.status == "ok", (result.status, result.message)
    assert len(result.calls) == len(calls)
    for call, res in zip(calls, result.calls, strict=True):
        assert res.error is None, res.error
        assert type(res.output) is np.ndarray
        np.testing.assert_allclose(res.output, reference_attention(*call.args, **call.kwargs))
