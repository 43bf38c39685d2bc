"""Whole-grade benchmark: a grade through the warm sandbox against the naive design, in one run.

    make bench-sandbox          (or: .venv/bin/python -m bench.sandbox [--grades 150])

Like with like: both sides are ``grader.engine.grading.grade`` end to end (plan the hidden
inputs, run the submission on them, judge the outputs, and for a wrong submission name its
misconception); only the executor differs.

- baseline: ``FreshInterpreterExecutor``, a fresh ``python -I`` per grade that imports numpy,
  runs the calls and writes the outputs back (how most graders work, with no isolation at all);
- whole grade: ``SandboxExecutor`` with a warm zygote (every isolation layer on).

Graded twice each: a correct attention (bench/correct_attention.py) and a wrong one (the golden
``missing_scale``, whose grade includes the diagnosis). Also prints the sandbox run alone. Both
submissions are our own files; no untrusted code runs outside the sandbox. Run it on an
otherwise idle machine: it prints the load average at the start and the end.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bench.common import CORRECT, ROOT, load, pct
from grader.engine.executors.base import (
    Call,
    CallResult,
    LocalRun,
    RunRequest,
    RunResult,
    RunStatus,
)

WRONG = (
    ROOT / "tests" / "golden" / "scaled-dot-product-attention" / "missing_scale.py"
).read_text()
SEED = 20260101


def exercise_spec() -> Any:
    from grader.engine.exercise_content import EXERCISES
    from grader.engine.grading import CheckSpec, ExerciseSpec

    ex = next(e for e in EXERCISES if e["slug"] == "scaled-dot-product-attention")
    checks = tuple(
        CheckSpec(name=c["name"], params=c["params"], weight=c["weight"]) for c in ex["checks"]
    )
    return ExerciseSpec(
        slug=ex["slug"], kind=ex["kind"], entry_point=ex["entry_point"], checks=checks
    )


# --- naive baseline ------------------------------------------------------------------------------

# The fresh interpreter's whole job: load the code, run every call (an exception is that call's
# result, as in the sandbox), send back the outputs and, where asked, the inputs after the call.
BASELINE_CHILD = r"""
import io, json, sys, traceback
import numpy as np
data = sys.stdin.buffer.read()
head_len = int.from_bytes(data[:8], "little")
head = json.loads(data[8:8 + head_len])
arrays = np.load(io.BytesIO(data[8 + head_len:]), allow_pickle=False)
ns = {"__name__": "submission"}
exec(compile(head["code"], "submission.py", "exec"), ns)
fn = ns[head["entry_point"]]
def arg(s):
    return arrays[s["a"]].copy() if "a" in s else s["v"]
outs, errors = {}, {}
for i, c in enumerate(head["calls"]):
    args = [arg(s) for s in c["args"]]
    kwargs = {k: arg(s) for k, s in c["kwargs"].items()}
    try:
        outs[f"o{i}"] = np.asarray(fn(*args, **kwargs), dtype=np.float64)
    except Exception:
        errors[i] = traceback.format_exc(limit=-3)
        continue
    if c["return_inputs"]:
        for j, a in enumerate(x for x in [*args, *kwargs.values()] if isinstance(x, np.ndarray)):
            outs[f"i{i}_{j}"] = a
buf = io.BytesIO()
np.savez(buf, **outs)
err = json.dumps(errors).encode()
sys.stdout.buffer.write(len(err).to_bytes(8, "little") + err + buf.getvalue())
"""


def baseline_request(code: str, entry_point: str, calls: Sequence[Call]) -> bytes:
    arrays: dict[str, np.ndarray] = {}

    def spec(v: Any) -> dict[str, Any]:
        if isinstance(v, np.ndarray):
            key = f"a{len(arrays)}"
            arrays[key] = v
            return {"a": key}
        return {"v": v.item() if isinstance(v, np.generic) else v}

    head = {
        "code": code,
        "entry_point": entry_point,
        "calls": [
            {
                "args": [spec(a) for a in c.args],
                "kwargs": {k: spec(v) for k, v in c.kwargs.items()},
                "return_inputs": c.return_inputs,
            }
            for c in calls
        ],
    }
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    head_bytes = json.dumps(head).encode()
    return len(head_bytes).to_bytes(8, "little") + head_bytes + buf.getvalue()


class FreshInterpreterExecutor:
    """The naive design as an Executor: one fresh ``python -I`` per run, no isolation. For the
    benchmark's own trusted files only.

    It runs every call in one go, the second phase's too (``ahead``: the diagnosis's calls,
    the same in every grade); a second phase asked for is then served from those results."""

    def __init__(self, ahead: Sequence[Call] = ()) -> None:
        self.ahead = tuple(ahead)

    def start(self, request: RunRequest) -> LocalRun:
        ahead = self.ahead if request.second_phase else ()
        whole = self._run(request.code, request.entry_point, (*request.calls, *ahead))
        n = len(request.calls)

        def phase(calls: Sequence[Call]) -> RunResult:
            if calls is request.calls:
                return RunResult(RunStatus.OK, whole.calls[:n])
            same = len(calls) == len(ahead) and all(
                a is b for a, b in zip(calls, ahead, strict=True)
            )
            assert same, "the bench knows the second phase ahead"
            return RunResult(RunStatus.OK, whole.calls[n:])

        return LocalRun(phase, request)

    def _run(self, code: str, entry_point: str, calls: Sequence[Call]) -> RunResult:
        proc = subprocess.run(
            [sys.executable, "-I", "-c", BASELINE_CHILD],
            input=baseline_request(code, entry_point, calls),
            capture_output=True,
            check=True,
            env={"OPENBLAS_NUM_THREADS": "1"},  # the fair, faster setting (see findings)
        )
        n = int.from_bytes(proc.stdout[:8], "little")
        errors = {int(k): v for k, v in json.loads(proc.stdout[8 : 8 + n]).items()}
        results = []
        with np.load(io.BytesIO(proc.stdout[8 + n :]), allow_pickle=False) as z:
            for i, call in enumerate(calls):
                if i in errors:
                    results.append(CallResult(error=errors[i]))
                    continue
                n_inputs = (
                    sum(isinstance(a, np.ndarray) for a in call.args) if call.return_inputs else 0
                )
                after = tuple(z[f"i{i}_{j}"] for j in range(n_inputs)) if n_inputs else None
                results.append(CallResult(output=z[f"o{i}"], inputs_after=after))
        return RunResult(RunStatus.OK, results)

    def close(self) -> None:
        pass


# --- measurement ---------------------------------------------------------------------------------


def measure(
    fn: Callable[..., Any],
    n: int,
    warmup: int = 3,
    pause: float = 0.0,
    before: Callable[[int], Any] | None = None,
) -> list[float]:
    """Times ``fn(i)``, or ``fn(i, before(i))`` with ``before`` run untimed in the pause (the
    work a worker does while idle)."""
    for i in range(warmup):
        fn(-1 - i, *(() if before is None else (before(-1 - i),)))
    times = []
    for i in range(n):
        if pause:
            time.sleep(pause)
        ready = () if before is None else (before(i),)
        t0 = time.perf_counter()
        fn(i, *ready)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def row(name: str, times: list[float]) -> float:
    med, p95 = statistics.median(times), pct(times, 95)
    print(f"{name:<52} median {med:8.2f} ms   p95 {p95:8.2f} ms   (n={len(times)})")
    return med


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--grades", type=int, default=150)
    parser.add_argument("--baseline-grades", type=int, default=20)
    # A grade arriving after some idle time is the realistic case for a worker; 0 = back-to-back.
    parser.add_argument("--pause-ms", type=float, default=20.0)
    args = parser.parse_args()

    from grader.engine.grading import _plan, grade, grade_plan
    from grader.engine.sandbox import SandboxExecutor
    from grader.engine.status import VerdictStatus

    spec = exercise_spec()
    pause = args.pause_ms / 1000
    print(f"load average at the start: {load()} (2 cores)")
    _, calls, diag = _plan(spec, SEED)
    fresh = FreshInterpreterExecutor(calls[len(calls) - len(diag) :])
    sandbox = SandboxExecutor()
    results: dict[str, float] = {}
    try:
        sandbox.self_check()
        for code, status, name in (
            (CORRECT, VerdictStatus.PASSED, "correct"),
            (WRONG, VerdictStatus.FAILED, "wrong"),
        ):
            # Same verdict both ways, or the comparison means nothing.
            a = grade(spec=spec, code=code, seed=SEED, executor=fresh)
            b = grade(spec=spec, code=code, seed=SEED, executor=sandbox)
            assert a.status == b.status == status and a.diagnosis == b.diagnosis, (a, b)

            def graded(
                seed: int, plan: Any = None, code: str = code, executor: Any = fresh
            ) -> None:
                grade(spec=spec, code=code, seed=seed % 2**31, executor=executor, plan=plan)

            def planned(seed: int) -> Any:
                return grade_plan(spec=spec, seed=seed % 2**31)

            results[f"base-{name}"] = statistics.median(
                measure(graded, args.baseline_grades, pause=pause)
            )
            results[name] = statistics.median(
                measure(
                    lambda s, c=code: graded(s, code=c, executor=sandbox), args.grades, pause=pause
                )
            )
            # As a worker grades a new submission: its inputs prepared while idle (the seed is
            # drawn at the claim, grader.services.grading._Plans); both sides alike.
            results[f"base-{name}-ready"] = statistics.median(
                measure(graded, args.baseline_grades, pause=pause, before=planned)
            )
            results[f"{name}-ready"] = statistics.median(
                measure(
                    lambda s, p, c=code: graded(s, p, code=c, executor=sandbox),
                    args.grades,
                    pause=pause,
                    before=planned,
                )
            )
            print(f"  {name}: {b.status}, diagnosis {list(b.diagnosis) or 'none'}")
        run_alone = measure(
            lambda _: sandbox.run(RunRequest(CORRECT, "attention", tuple(calls))),
            args.grades,
            pause=pause,
        )
    finally:
        sandbox.close()

    print(f"load average at the end: {load()}")
    print()
    print(f"{'':<52} {'median':>13}")
    for name in ("correct", "wrong"):
        for key, how in ((name, "planned in the grade"), (f"{name}-ready", "inputs ready")):
            base, whole = results[f"base-{key}"], results[key]
            print(f"{name}, {how}:")
            print(f"  baseline: fresh python -I + numpy, judged          {base:8.2f} ms")
            print(
                f"  whole grade: warm sandbox, judged                  {whole:8.2f} ms"
                f"   {base / whole:5.1f}x the baseline"
            )
    print(
        f"sandbox run alone (correct, {len(calls)} calls, no judging)   "
        f"{statistics.median(run_alone):8.2f} ms"
    )
    print()
    for ready, how in (("-ready", "as a worker grades a new submission"), ("", "planned in it")):
        goals = (
            ("correct <= 5 ms", results[f"correct{ready}"] <= 5.0),
            ("wrong <= 8 ms", results[f"wrong{ready}"] <= 8.0),
            (
                "each >= 20x its baseline",
                all(
                    results[f"base-{n}{ready}"] / results[f"{n}{ready}"] >= 20
                    for n in ("correct", "wrong")
                ),
            ),
        )
        for text, met in goals:
            print(f"goal: whole grade {text} ({how}): {'MET' if met else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
