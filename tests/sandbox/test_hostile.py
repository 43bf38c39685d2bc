"""Hostile submissions: each must be contained, leave the host untouched, and leave the sandbox
healthy (a correct grade right after, at full speed, on the same zygote).

The cases are data: tests/sandbox/hostile/*.py, each with header lines
    # status: <RunStatus value>[|<another>]     what the run must end as
    # limits: wall=<s> cpu=<s> memory=<MB>      optional, smaller limits keep the suite quick
    # check: <what> [<what>...]                 optional checks of the calls (see _check)
    # host-absent: <path> [<path>...]           files the attack tries to create on the host
    # then: <case>                              optional: another case graded right after, on
                                                the same worker, which must end as its own
                                                header says (what one run left, the next finds)
Every run goes through the fenced sandbox (see conftest.py and fence.py): never without it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from grader.engine.executors.base import Limits, RunResult, RunStatus
from grader.engine.reference import (
    KIND_ATTENTION_BACKWARD,
    KIND_DEMONSTRATION,
    KIND_SOFTMAX_BACKWARD,
)
from grader.engine.sandbox import messages as M
from tests.sandbox.conftest import (
    CORRECT_ATTENTION,
    FencedSandbox,
    assert_correct,
    reference_attention,
    small_calls,
)

HOSTILE_DIR = Path(__file__).resolve().parent / "hostile"

# Least dangerous first, so a broken layer shows up on a harmless probe before a destructive one.
ORDER = [
    "read_etc_passwd",
    "read_project_files",
    "read_database",
    "proc_environ",
    "write_root",
    "write_tmp",
    "write_project",
    "tcp_postgres",
    "tcp_redis",
    "subprocess_run",
    "os_system",
    "ctypes_system",
    "ptrace_and_namespaces",
    "ipc_find",
    "ipc_leave",
    "sibling_sabotage",
    "kill_all_counted",
    "kill_parent",
    "kill_pid1",
    "kill_all",
    "sys_exit",
    "os_exit",
    "sys_exit_at_load",
    "pickle_reduce",
    "pickle_forged_npy",
    "eq_subclass",
    "monkeypatch_allclose",
    "gc_scan",
    "forged_verdicts",
    "json_bomb_frame",
    "huge_frame_header",
    "result_area_forgery",
    "broadcast_huge",
    "deep_recursion",
    "deep_recursion_unlimited",
    "ctypes_segfault",
    "sleep_forever",
    "infinite_loop",
    "sigxcpu_ignored",
    "alloc_10gb",
    "gradual_growth",
    "stdout_1gb",
    "stdout_1gb_raw_fd",
    "threads_1000",
    "fork_bomb_counted",
    "fork_bomb",
]


@dataclass
class Case:
    name: str
    code: str
    statuses: set[str]
    limits: Limits = field(default_factory=Limits)
    checks: list[str] = field(default_factory=list)
    host_absent: list[str] = field(default_factory=list)
    then: str | None = None


def load_case(path: Path) -> Case:
    code = path.read_text()
    header: dict[str, str] = {}
    for line in code.splitlines():
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(":")
        header[key.strip()] = value.strip()
    lim = dict(item.split("=") for item in header.get("limits", "").split())
    return Case(
        name=path.stem,
        code=code,
        statuses=set(header["status"].split("|")),
        limits=Limits(
            wall_seconds=float(lim.get("wall", 10)),
            cpu_seconds=float(lim.get("cpu", 5)),
            memory_mb=int(lim.get("memory", 512)),
        ),
        checks=header.get("check", "").split(" ") if "check" in header else [],
        host_absent=header.get("host-absent", "").split(),
        then=header.get("then"),
    )


def test_every_hostile_file_is_in_the_order() -> None:
    assert sorted(ORDER) == sorted(p.stem for p in HOSTILE_DIR.glob("*.py"))


def _check(case: Case, result: RunResult, calls: list) -> None:
    for check in case.checks:
        kind, _, arg = check.partition("=")
        if kind == "zeros":  # the attack reports what it achieved: nothing
            for res in result.calls:
                assert res.error is None, res.error
                assert np.all(res.output == 0), f"escaped: {res.output}"
        elif kind == "nonzero":
            for res in result.calls:
                assert res.error is None, res.error
                assert np.all(res.output != 0)
        elif kind == "at-most":
            for res in result.calls:
                assert res.error is None, res.error
                assert int(res.output) <= int(arg)
        elif kind == "call-error":
            assert result.calls, "no call results"
            for res in result.calls:
                assert res.output is None
                assert res.error is not None and arg.replace("_", " ") in res.error, res.error
        elif kind == "no-output":  # whatever happened, no call produced a value
            for res in result.calls:
                assert res.output is None and res.error
        elif kind == "plain-ndarray":
            for res in result.calls:
                assert type(res.output) is np.ndarray
        elif kind == "wrong-output":
            for call, res in zip(calls, result.calls, strict=True):
                if res.output is not None:
                    expected = reference_attention(*call.args)
                    assert res.output.shape != expected.shape or not np.allclose(
                        res.output, expected
                    )
        else:
            raise AssertionError(f"unknown check {check}")


def _check_message(case: Case, result: RunResult) -> None:
    """Every non-OK verdict explains itself with its constant message."""
    lim = case.limits
    expected = {
        RunStatus.OK: "",
        RunStatus.CPU_LIMIT: M.MSG_CPU_LIMIT.format(seconds=lim.cpu_seconds),
        RunStatus.WALL_LIMIT: M.MSG_WALL_LIMIT.format(seconds=lim.wall_seconds),
        RunStatus.MEMORY_LIMIT: M.MSG_MEMORY_LIMIT.format(mb=lim.memory_mb),
        RunStatus.OUTPUT_LIMIT: M.MSG_OUTPUT_LIMIT.format(kib=1024),
        RunStatus.BAD_OUTPUT: M.MSG_BAD_OUTPUT,
    }
    if result.status in expected:
        assert result.message == expected[result.status]
    elif result.status == RunStatus.SIGNALED:
        assert result.message in {
            M.MSG_SIGNALED.format(signal=s) for s in ("SIGSEGV", "SIGBUS", "SIGABRT")
        }
    elif result.status == RunStatus.EXITED:
        assert result.message in {M.MSG_EXITED.format(code=c) for c in (0, 1)}
    else:
        raise AssertionError(f"unexpected status {result.status}")


def _run_and_check(sandbox: FencedSandbox, case: Case, *, seed: int) -> None:
    calls = small_calls(2, seed=seed)
    result = sandbox.run(code=case.code, entry_point="attention", calls=calls, limits=case.limits)
    assert result.status in case.statuses, (case.name, result.status, result.message, result.calls)
    assert result.status != RunStatus.INTERNAL
    _check_message(case, result)
    _check(case, result, calls)


@pytest.mark.parametrize("name", ORDER)
def test_hostile_submission_is_contained(sandbox: FencedSandbox, name: str) -> None:
    case = load_case(HOSTILE_DIR / f"{name}.py")
    for path in case.host_absent:
        assert not os.path.exists(path), f"{path} exists before the test: clean it up"
    starts_before = sandbox.call("self_check")  # healthy and checked before the attack

    _run_and_check(sandbox, case, seed=7)
    for path in case.host_absent:
        assert not os.path.exists(path), f"the attack wrote {path} on the host"
    if case.then is not None:
        _run_and_check(sandbox, load_case(HOSTILE_DIR / f"{case.then}.py"), seed=9)

    # Still healthy: a correct grade right after, same zygote (not restarted), fast.
    good = small_calls(3, seed=8)
    after = sandbox.run(code=CORRECT_ATTENTION, entry_point="attention", calls=good)
    assert_correct(after, good)
    assert sandbox.zygote_starts == starts_before, "the zygote had to be restarted"
    assert sandbox.last_seconds < 1.0
    assert sandbox.call("self_check") == starts_before


# --- hostile code aimed at the softmax backward's grade ------------------------------------------
# Its checks judge tiny numbers (a saturated softmax's gradient, down to 1e-300) and its
# diagnosis and pictures run a second phase of calls.

BACKWARD_HOSTILE: dict[str, tuple[str, set[str]]] = {
    # Judging happens outside the child: patching numpy in it changes no verdict.
    "numpy_patched": (
        """import numpy as np
np.allclose = lambda *a, **k: True
np.isfinite = lambda x: np.ones(np.shape(x), dtype=bool)
np.abs = lambda x: x * 0


def softmax_backward(p, g):
    return np.zeros_like(p)
""",
        {"failed"},
    ),
    # Right on ordinary inputs, spinning on a saturated p: the limits stop the run.
    "spin_on_saturated_p": (
        """import numpy as np


def softmax_backward(p, g):
    if np.min(p) < 1e-20:
        while True:
            pass
    return p * (g - np.sum(g * p, axis=-1, keepdims=True))
""",
        {"failed", "error"},
    ),
    # An ndarray subclass whose arithmetic lies: only plain arrays cross the boundary.
    "lying_subclass": (
        """import numpy as np


class Liar(np.ndarray):
    def __sub__(self, other):
        return np.zeros(self.shape)

    def __abs__(self):
        return np.zeros(self.shape)

    def __eq__(self, other):
        return np.ones(self.shape, dtype=bool)


def softmax_backward(p, g):
    return np.zeros_like(p).view(Liar)
""",
        {"failed"},
    ),
    # The reference is not there to copy: no project files, no project modules.
    "copy_the_reference": (
        """import numpy as np

try:
    from grader.engine.reference import softmax_backward as _ref
except Exception:
    _ref = None
try:
    _text = open("REFERENCE_PATH").read()
except Exception:
    _text = ""


def softmax_backward(p, g):
    if _ref is not None or _text:
        return _ref(p, g) if _ref else p * (g - np.sum(g * p, axis=-1, keepdims=True))
    return np.zeros_like(p)
""",
        {"failed"},
    ),
}


# --- hostile code aimed at the ten-minute demonstration's grade ----------------------------------
# Its arguments are whole numbers and its output four of them: an attack can only lie about the
# numbers, stall on the largest head size, or flood the output.

DEMO_HOSTILE: dict[str, tuple[str, set[str]]] = {
    # Judging happens outside the child: patching numpy's comparisons in it changes no verdict.
    "numpy_patched": (
        """import numpy as np
np.allclose = lambda *a, **k: True
np.isfinite = lambda x: np.ones(np.shape(x), dtype=bool)
np.random.default_rng = lambda seed=None: np.random.Generator(np.random.PCG64(0))


def scaling_demo(d_k, rng_seed, n=16):
    return 1.0, 1.0, 1.0, 1.0
""",
        {"failed"},
    ),
    # Right on small heads, spinning where the overflow check's head size comes: limits stop it.
    "spin_on_the_largest_head": (
        """import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    if d_k > 100_000:
        while True:
            pass
    rng = np.random.default_rng(rng_seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    S = Q @ K.T
    t = S / np.sqrt(d_k)
    top = [np.max(np.exp(r - r.max()) / np.exp(r - r.max()).sum()) for r in (S[0], t[0])]
    return S.max(), t.max(), top[0], top[1]
""",
        {"failed", "error"},
    ),
    # Four numbers asked, a flood returned: the output bound ends the run, not the worker.
    "flood_the_output": (
        """import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    return np.ones(50_000_000)
""",
        {"failed", "error"},
    ),
    # The reference is not there to copy: no project files, no project modules.
    "copy_the_reference": (
        """import numpy as np

try:
    from grader.engine.reference import scaling_demonstration as _ref
except Exception:
    _ref = None
try:
    _text = open("REFERENCE_PATH").read()
except Exception:
    _text = ""


def scaling_demo(d_k, rng_seed, n=16):
    if _ref is not None:
        return tuple(_ref(d_k, rng_seed, n))
    return (float(len(_text)), 0.0, 0.0, 0.0)
""",
        {"failed"},
    ),
}


# --- hostile code aimed at the attention backward's grade ----------------------------------------
# Its function returns a tuple, which the child reads as one array before anything crosses, and
# its finite differences are computed here from the forward pass.

ATTENTION_BACKWARD_HOSTILE: dict[str, tuple[str, set[str]]] = {
    # Judging happens outside the child: patching numpy in it changes no verdict.
    "numpy_patched": (
        """import numpy as np
np.allclose = lambda *a, **k: True
np.stack = lambda arrays, *a, **k: np.zeros((3, *np.shape(arrays[0])))


def attention_backward(Q, K, V, dO, mask=None):
    return np.zeros_like(Q), np.zeros_like(K), np.zeros_like(V)
""",
        {"failed"},
    ),
    # Objects that claim to be arrays: the child converts them to plain arrays before sending,
    # so what they say about themselves afterwards never reaches the judge.
    "lying_tuple": (
        """import numpy as np


class Lazy:
    def __init__(self, shape):
        self.shape = shape

    def __array__(self, dtype=None, copy=None):
        return np.zeros(self.shape)

    def __eq__(self, other):
        return True


def attention_backward(Q, K, V, dO, mask=None):
    return Lazy(Q.shape), Lazy(K.shape), Lazy(V.shape)
""",
        {"failed"},
    ),
    # A tuple far larger than any answer (a broadcast view, cheap to make): refused by size.
    "huge_broadcast": (
        """import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    big = np.broadcast_to(np.float64(1.0), (3, 4096, 4096, 64))
    return big
""",
        {"failed", "error"},
    ),
    # Right on small inputs, spinning on the saturated ones: the limits stop the run.
    "spin_on_large_scores": (
        """import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    if np.max(np.abs(Q)) > 6:
        while True:
            pass
    s = np.sqrt(Q.shape[-1])
    S = Q @ np.swapaxes(K, -1, -2) / s
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(-1, keepdims=True))
    P = P / P.sum(-1, keepdims=True)
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - (dP * P).sum(-1, keepdims=True))
    return dS @ K / s, np.swapaxes(dS, -1, -2) @ Q / s, np.swapaxes(P, -1, -2) @ dO
""",
        {"failed", "error"},
    ),
    # The reference is not there to copy: no project files, no project modules.
    "copy_the_reference": (
        """import numpy as np

try:
    from grader.engine.reference import attention_backward as _ref
except Exception:
    _ref = None
try:
    _text = open("REFERENCE_PATH").read()
except Exception:
    _text = ""


def attention_backward(Q, K, V, dO, mask=None):
    if _ref is not None:
        return _ref(Q, K, V, dO, mask)
    return np.zeros_like(Q), np.zeros_like(K), np.ones_like(V) * len(_text)
""",
        {"failed"},
    ),
}


# Each attack is graded whole (checks, diagnosis, pictures) by grade() in the fenced runner: it
# must be judged on what its function returned, in trusted code, with the sandbox healthy for the
# next grade.
KIND_HOSTILE: dict[str, dict[str, tuple[str, set[str]]]] = {
    KIND_SOFTMAX_BACKWARD: BACKWARD_HOSTILE,
    KIND_DEMONSTRATION: DEMO_HOSTILE,
    KIND_ATTENTION_BACKWARD: ATTENTION_BACKWARD_HOSTILE,
}


@pytest.mark.parametrize(
    ("kind", "name"), [(k, n) for k, attacks in KIND_HOSTILE.items() for n in sorted(attacks)]
)
def test_hostile_code_aimed_at_a_kind_is_judged_on_its_outputs(
    sandbox: FencedSandbox, kind: str, name: str
) -> None:
    from grader.engine.kinds import REFERENCE_SOURCES
    from tests.grader.helpers import builtin_spec

    code, statuses = KIND_HOSTILE[kind][name]
    reference_path = Path(__file__).resolve().parents[2] / "grader" / "engine" / "reference.py"
    code = code.replace("REFERENCE_PATH", str(reference_path))  # the host's copy, not visible
    spec = builtin_spec(kind)
    verdict = sandbox.grade(spec=spec, code=code, seed=3)
    assert verdict.status in statuses, verdict.to_dict()
    assert verdict.score < 1.0
    # Still healthy: the reference passes right after, on the same sandbox.
    after = sandbox.grade(spec=spec, code=REFERENCE_SOURCES[kind], seed=3)
    assert after.status == "passed", after.to_dict()
