"""What one sandbox child costs: CPU per run and page faults per child, idle and busy, in one run.

    make bench-children         (or: .venv/bin/python -m bench.children [--runs 200])

A fresh child per submission (forked from the zygote, every layer applied, the module loaded,
then killed) is the largest part of a verdict's CPU in a burst (bench/pipeline.py). This
prints, for runs 30 ms apart (idle: children warm up while waiting) and back to back (busy:
they skip the warm-up), the CPU of the zygote and its children per run (from /proc, the
zygote's reaped children included), and each child's own CPU and minor page faults (from the
zygote's wait4, as it reports an exit): the rest of a run's CPU is the zygote's. Runs: one
tiny call (the floor), a correct grade, and a correct grade with its pictures, as the worker
runs it. Our own trusted code only. Prints the load average at the start and the end.

The baseline, measured in the same run: a bare ``os.fork()`` of a Python that has imported
numpy (frozen for the collector, as the zygote is), the child doing one trivial numpy call and
exiting: what any fresh process per submission costs here, with no layer, request or reply.
Also in the same run: what one copy-on-write page fault costs here (children of the baseline
that write one byte in each of COW_PAGES pages of the parent's memory, against those that
write none), and so what each row's faults cost at that price.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import CORRECT, load
from bench.sandbox import SEED, exercise_spec


def sandbox_cpu(pids: list[str]) -> float:
    """Seconds of CPU of these processes and of the children they reaped."""
    total = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        total += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    return total / os.sysconf("SC_CLK_TCK")


# Run in a fresh interpreter of its own: it forks, and this process should not.
BARE_FORK = """
import gc, os, resource, sys
import numpy as np
runs, pages = int(sys.argv[1]), int(sys.argv[2])
parent_pages = bytearray(pages * 4096)
for i in range(0, len(parent_pages), 4096):
    parent_pages[i] = 1  # faulted in here: a child's first write to each is a copy-on-write
gc.collect(); gc.freeze()
def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime, r.ru_minflt
def forks(write):
    (c0, f0), (p0, _) = cpu(resource.RUSAGE_CHILDREN), cpu(resource.RUSAGE_SELF)
    for _ in range(runs):
        pid = os.fork()
        if pid == 0:
            float((np.ones(3) * 2).sum())
            for i in range(0, len(parent_pages) if write else 0, 4096):
                parent_pages[i] = 2
            os._exit(0)
        os.waitpid(pid, 0)
    (c1, f1), (p1, _) = cpu(resource.RUSAGE_CHILDREN), cpu(resource.RUSAGE_SELF)
    return (c1 - c0 + p1 - p0) / runs, (f1 - f0) / runs
bare, written = forks(False), forks(True)
print(*bare, (written[0] - bare[0]) / (written[1] - bare[1]))
"""
# The pages the copy-on-write measurement's children write: about what a grade's child faults.
COW_PAGES = 1000


def bare_fork(runs: int) -> tuple[float, float, float]:
    """CPU seconds per fork (parent and child) and page faults per child of the baseline, and
    the CPU seconds one copy-on-write fault costs: children that write one byte in each of
    COW_PAGES pages of the parent's memory, against children of the baseline that write none."""
    out = subprocess.run(
        [sys.executable, "-I", "-c", BARE_FORK, str(runs), str(COW_PAGES)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()

    from grader.engine import grading
    from grader.engine.executors.base import RunRequest
    from grader.engine.plots import plot_calls
    from grader.engine.sandbox import executor as sandbox_executor
    from grader.engine.sandbox import pool

    faults: list[int] = []
    child_cpu: list[float] = []  # each child's own CPU, from the zygote's exit report (wait4)
    receive = pool.Zygote.receive

    def recording(self: Any, timeout: float) -> Any:
        msg = receive(self, timeout)
        if msg and msg.get("op") == "exit" and "minflt" in msg:
            faults.append(int(msg["minflt"]))
            child_cpu.append(float(msg["cpu"]))
        return msg

    pool.Zygote.receive = recording  # type: ignore[method-assign]
    spec = exercise_spec()
    _, calls, _ = grading._plan(spec, SEED)
    print(f"load average at the start: {load()} (2 cores)")
    ex = sandbox_executor.SandboxExecutor()
    zygote = str(ex._pool.zygote.proc.pid) if ex._pool.zygote else ""
    group = ex._pool.cgroup

    def pids() -> list[str]:
        members = (group / "cgroup.procs").read_text().split() if group else []
        return sorted({zygote, *members} - {""})

    runs: dict[str, Callable[[int], Any]] = {
        "one tiny call": lambda i: ex.run(
            RunRequest(CORRECT, "attention", tuple(calls[:1]), spec.limits)
        ),
        "correct grade": lambda i: grading.grade(
            spec=spec, code=CORRECT, seed=SEED + i, executor=ex
        ),
        "correct grade with its pictures": lambda i: grading.grade(
            spec=spec,
            code=CORRECT,
            seed=SEED + i,
            executor=ex,
            pictures=plot_calls(spec.kind),
        ),
    }
    rows = []
    try:
        for mode, pause in (("idle", 0.03), ("busy", 0.0)):
            for name, run in runs.items():
                for i in range(5):
                    run(i)
                time.sleep(0.3)
                faults.clear()
                child_cpu.clear()
                before = sandbox_cpu(pids())
                for i in range(args.runs):
                    if pause:
                        time.sleep(pause)
                    run(i)
                time.sleep(0.3)  # the last children exit and are reaped
                cpu = (sandbox_cpu(pids()) - before) / args.runs
                own = statistics.median(child_cpu) if child_cpu else None
                rows.append((mode, name, cpu, own, statistics.median(faults) if faults else None))
    finally:
        ex.close()
    base_cpu, base_faults, per_fault = bare_fork(args.runs)
    print(f"load average at the end: {load()}")
    print()
    print(
        f"baseline: a bare fork of a numpy Python, one trivial call, exit   "
        f"CPU per run {base_cpu * 1e3:6.2f} ms   page faults per child {base_faults:6.0f}"
    )
    print(
        f"one copy-on-write fault (children writing {COW_PAGES} pages of the parent's memory, "
        f"against none): {per_fault * 1e6:.2f} us"
    )
    for mode, name, cpu, own, flt in rows:
        shown = f"{flt:6.0f}" if flt is not None else "     -"
        mine = f"{own * 1e3:5.2f} ms" if own is not None else "   -    "
        paid = f"{flt * per_fault * 1e3:5.2f} ms" if flt is not None else "   -    "
        print(
            f"{mode:<5} {name:<34} sandbox CPU per run {cpu * 1e3:6.2f} ms "
            f"(the child itself {mine})   page faults per child (median) {shown} "
            f"(at that cost {paid})   {cpu / base_cpu:4.1f}x the baseline"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
