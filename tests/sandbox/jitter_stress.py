"""Golden files graded again and again with the parent's timing jittered: finds interleavings of
the two-phase protocol (PAUSE, the second phase, half-written calls) that a quiet run never
meets.

    .venv/bin/python tests/sandbox/jitter_stress.py [--slug multi-head-attention] [--seconds 240]

Not part of `make test` (it is a search, not a check: a rare race needs thousands of grades).
Only our own golden files run, and only through the sandbox. It prints every grade whose
verdict differs from expected.json and every frame the trusted side rejected, then a count.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import grader.engine.sandbox.driver as driver  # noqa: E402
import grader.engine.sandbox.executor as ex  # noqa: E402
import grader.engine.sandbox.pool as pool  # noqa: E402
from grader.engine.grading import grade  # noqa: E402
from grader.engine.sandbox import codec  # noqa: E402
from tests.grader.helpers import KIND_OF_SLUG, builtin_spec  # noqa: E402

GOLDEN = ROOT / "tests" / "golden"


def jitter() -> None:
    """Sleep up to 2 ms before three polls in ten; report each frame the parent rejects."""
    poll, frame = driver.fds_poll, codec.frame_take

    def slow_poll(r: list[int], w: list[int], timeout: float) -> Any:
        if random.random() < 0.3:
            time.sleep(random.random() * 0.002)
        return poll(r, w, timeout)

    def loud_frame(state: Any, kind: bytes, payload: bytes) -> bool:
        ok = frame(state, kind, payload)
        if not ok:
            print(
                f"REJECTED {kind!r} results={len(state.results)}/{len(state.calls)} "
                f"paused={state.paused} second={state.second_phase} "
                f"pending={state.pending is not None}",
                flush=True,
            )
        return ok

    driver.fds_poll = slow_poll
    codec.frame_take = loud_frame


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slug", default="multi-head-attention")
    parser.add_argument("--seconds", type=float, default=240)
    args = parser.parse_args()
    expected = json.loads((GOLDEN / "expected.json").read_text())[args.slug]
    jitter()
    sandbox = ex.SandboxExecutor()
    sandbox.cpu_pressure = pool.CpuPressure(None)  # the gap below alone decides warm or cold
    runs = bad = 0
    end = time.monotonic() + args.seconds
    try:
        while time.monotonic() < end:
            name, want = random.choice(list(expected.items()))
            pool.BUSY_GAP_SECONDS = random.choice([0, 10])  # cold children, then warm ones
            code = (GOLDEN / args.slug / name).read_text()
            spec = builtin_spec(KIND_OF_SLUG[args.slug])
            verdict = grade(spec=spec, code=code, seed=0, executor=sandbox)
            runs += 1
            if verdict.status != want["status"] or list(verdict.diagnosis) != want["diagnosis"]:
                bad += 1
                print(f"MISMATCH {name} {verdict.status} {verdict.diagnosis} {verdict.message}")
    finally:
        sandbox.close()
    print(f"{runs} grades of {args.slug}, {bad} verdicts not as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
