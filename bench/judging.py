"""What judging costs in a whole grade: a wrong submission (checks + diagnosis) against a
correct one, both graded in this process with trusted callables, in one run.

    .venv/bin/python -m bench.judging [--grades 30]

The executor is ``CallableExecutor`` (no sandbox): what is timed is the engine's own work,
planning the inputs, judging the outputs and, for a wrong submission, naming the
misconception. The baseline is the correct reference, whose grade skips the diagnosis.
Prints medians and the ratio; never part of ``make test``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from grader.engine import reference
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.grading import grade
from grader.engine.kinds import attention_mistakes as wrong
from tests.grader.helpers import builtin_spec

WRONG = ("attention_missing_scale", "attention_scale_by_d", "attention_mask_inverted")


def _median_ms(func: object, grades: int) -> float:
    spec = builtin_spec(reference.KIND_ATTENTION)
    executor = CallableExecutor(func)
    grade(spec=spec, code="", seed=0, executor=executor)  # warm-up
    times = []
    for seed in range(1, grades + 1):
        start = time.perf_counter()
        grade(spec=spec, code="", seed=seed, executor=executor)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--grades", type=int, default=30)
    grades = parser.parse_args().grades
    print("load average at the start:", [f"{x:.2f}" for x in os.getloadavg()])
    base = _median_ms(reference.attention, grades)
    print(f"baseline: correct attention, whole grade in-process   median {base:7.2f} ms")
    for name in WRONG:
        ms = _median_ms(getattr(wrong, name), grades)
        print(f"{name:<40} median {ms:7.2f} ms   {ms / base:5.2f}x the baseline")
    print("load average at the end:", [f"{x:.2f}" for x in os.getloadavg()])


if __name__ == "__main__":
    main()
