"""What a realistic mix of submissions costs a worker: every golden file, graded in one run.

    make bench-corpus           (or: .venv/bin/python -m bench.corpus [--rounds 3])

Grades each file of tests/golden (correct ones, wrong ones of every misconception, syntax and
import errors, loop-based and slow code: student-style submissions of all three exercises)
through one warm sandbox with ``grading.grade``, and prints the distribution of a whole grade
and what one worker process would sustain on that mix. The README's scale-out estimate uses
these figures. The baseline, in the same run: the correct attention (bench/correct_attention.py)
graded through the same sandbox after every BASELINE_EVERY-th file, so that the machine's drift
weighs on both alike. Prints the load average at the start and the end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from bench.common import CORRECT, ROOT, load
from grader.engine.sandbox import SandboxExecutor
from tests.grader.helpers import KIND_OF_SLUG, builtin_spec

GOLDEN = ROOT / "tests" / "golden"
BASELINE_EVERY = 4
ATTENTION = "scaled-dot-product-attention"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from grader.engine.grading import grade

    files = sorted(
        (slug, path) for slug in KIND_OF_SLUG for path in (GOLDEN / slug).glob("*.[pt][yx]*")
    )
    print(f"load average at the start: {load()} (2 cores)")
    executor = SandboxExecutor()
    times: list[float] = []
    baseline: list[float] = []
    by_status: dict[str, list[float]] = {}
    try:
        executor.self_check()
        for round_ in range(args.rounds + 1):
            for slug, path in files:
                spec = builtin_spec(KIND_OF_SLUG[slug])
                time.sleep(0.01)
                t = time.perf_counter()
                verdict = grade(spec=spec, code=path.read_text(), seed=round_, executor=executor)
                took = (time.perf_counter() - t) * 1000
                if round_:  # the first round warms up
                    times.append(took)
                    by_status.setdefault(verdict.status, []).append(took)
                if round_ and len(times) % BASELINE_EVERY == 0:
                    spec = builtin_spec(KIND_OF_SLUG[ATTENTION])
                    time.sleep(0.01)
                    t = time.perf_counter()
                    grade(spec=spec, code=CORRECT, seed=round_, executor=executor)
                    baseline.append((time.perf_counter() - t) * 1000)
    finally:
        executor.close()
    print(f"load average at the end: {load()}")
    ordered = sorted(times)
    mean = statistics.fmean(times)
    print(f"\n{len(files)} golden files x {args.rounds} rounds = {len(times)} grades")
    print(
        f"whole grade: mean {mean:.1f} ms, median {statistics.median(times):.1f} ms, "
        f"p95 {ordered[int(0.95 * (len(ordered) - 1))]:.1f} ms, max {ordered[-1]:.1f} ms"
    )
    for status, ts in sorted(by_status.items()):
        print(f"  {status:<15} {len(ts):4d} grades, mean {statistics.fmean(ts):7.1f} ms")
    base = statistics.fmean(baseline)
    print(
        f"baseline: the correct attention, {len(baseline)} grades, mean {base:.1f} ms, "
        f"median {statistics.median(baseline):.1f} ms; the mix's mean is {mean / base:.2f}x it"
    )
    print(f"one worker process on this mix: about {1000 / mean:.0f} grades/s (1 / mean)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
