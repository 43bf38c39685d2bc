"""What a forked child of a warm numpy Python costs, by interpreter: CPU and page faults.

    make bench-fork-cow         (or: .venv/bin/python -E -s -m bench.fork_cow [--runs 300])
    /path/to/other/python -I bench/fork_cow.py       (any Python with numpy: compare versions)

It imports nothing of the project, so another interpreter can run the file itself (``-I``
drops the current folder from the path, which ``-m`` needs: ``-E -s`` keeps the rest of it).

Not part of `make bench`: it asks which CPython would make the sandbox's children cheaper.
The parent imports what the zygote imports, warms numpy and freezes the collector; each
child does what a small grade does outside the layers (a JSON header, compile and exec of an
attention module, ten calls, their bytes) and exits. Most of a child's cost on this machine
is page faults, and most of those are copy-on-write of objects whose reference counts the
child writes. Python 3.12 makes many shared objects immortal (no reference count writes).
The baseline, in the same run (interleaved in blocks of ten): a bare fork whose child exits at
once.
Our own trusted code only; nothing here runs a submission.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import sys
from pathlib import Path

import numpy as np

BLOCK = 10
# The attention every benchmark grades (read here: the child compiles it as a submission).
SOURCE = (Path(__file__).resolve().parent / "correct_attention.py").read_text()


def child() -> None:
    json.loads(json.dumps({"calls": [{"args": [{"a": 0, "shape": [8, 16]}]}] * 10}))
    module: dict[str, object] = {}
    exec(compile(SOURCE, "submission.py", "exec"), module)
    attention = module["attention"]
    for _ in range(10):
        q = np.frombuffer(np.ones((8, 16)).tobytes()).reshape(8, 16).copy()
        attention(q, q, q).tobytes()  # type: ignore[operator]


def usage(who: int) -> tuple[float, int]:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime, r.ru_minflt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    import numpy.fft  # what the zygote imports
    import numpy.linalg
    import numpy.random  # noqa: F401

    a = np.ones((8, 64))
    float((a @ a.T).sum())
    gc.collect()
    gc.freeze()
    # The baseline, interleaved in blocks of BLOCK: a child that exits at once (a bare fork).
    totals = {"grade": [0.0, 0, 0.0, 0], "bare": [0.0, 0, 0.0, 0]}
    for block in range(0, args.runs, BLOCK):
        for kind, work in (("grade", child), ("bare", None)):
            (c0, f0), (p0, g0) = usage(resource.RUSAGE_CHILDREN), usage(resource.RUSAGE_SELF)
            for _ in range(min(BLOCK, args.runs - block)):
                pid = os.fork()
                if pid == 0:
                    if work is not None:
                        work()
                    os._exit(0)
                os.waitpid(pid, 0)
            (c1, f1), (p1, g1) = usage(resource.RUSAGE_CHILDREN), usage(resource.RUSAGE_SELF)
            for i, delta in enumerate((c1 - c0, f1 - f0, p1 - p0, g1 - g0)):
                totals[kind][i] += delta
    n = args.runs
    (cpu, faults, fork, fork_faults), (bare_cpu, bare_faults, _, _) = (
        [t / n for t in totals[k]] for k in ("grade", "bare")
    )
    print(
        f"Python {sys.version.split()[0]}, numpy {np.__version__}: child CPU "
        f"{cpu * 1e3:.2f} ms, {faults:.0f} page faults; the parent's fork "
        f"{fork * 1e3:.2f} ms, {fork_faults:.0f} faults"
    )
    print(
        f"baseline: a bare fork (the child exits at once): child CPU {bare_cpu * 1e3:.2f} ms, "
        f"{bare_faults:.0f} page faults; a small grade's child is {cpu / bare_cpu:.1f}x its CPU, "
        f"{faults / max(bare_faults, 1):.1f}x its faults"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
