"""Where a sandbox child's page faults land: each fault's address, mapped onto the zygote's
memory map (the child's, at its fork).

    make bench-faults           (or: .venv/bin/python -m bench.faults [--runs 100])

As root; needs perf (Debian's linux-perf).

Not part of `make bench`: it explains bench/children.py's fault counts. Runs one tiny call
back to back (as in a burst) under `perf record -e page-faults -c 1 -d -a`, then counts the
faults of the children and of the zygote by the mapping they fall in (CPython's object arenas
are anonymous memory, static objects live in libpython's writable data). Our own trusted code
only, through the sandbox.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import load
from grader.engine.sandbox.launcher import process_tree


def python_zygote(outer: int) -> int:
    """The zygote's Python under bubblewrap: the first python3 below the launcher."""
    for pid in sorted(process_tree(outer)):
        if Path(f"/proc/{pid}/comm").read_text().strip() == "python3":
            return pid
    raise RuntimeError("no python3 zygote below the sandbox launcher")


def regions(pid: int) -> list[tuple[int, int, str]]:
    out = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        parts = line.split()
        start, end = (int(x, 16) for x in parts[0].split("-"))
        name = parts[5].rsplit("/", 1)[-1] if len(parts) > 5 else "anonymous"
        out.append((start, end, f"{name} {parts[1]}"))
    return sorted(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    if not shutil.which("perf"):
        print("perf is not installed (Debian: apt-get install linux-perf)")
        return 1
    import numpy as np

    from grader.engine.executors.base import Call, RunRequest
    from grader.engine.sandbox import SandboxExecutor

    print(f"load average at the start: {load()} (2 cores)")
    ex = SandboxExecutor()
    tmp = Path(tempfile.mkdtemp(prefix="bench-faults-"))
    try:
        assert ex._pool.zygote is not None
        zygote = python_zygote(ex._pool.zygote.proc.pid)
        maps = regions(zygote)
        code, calls = "def f(x):\n    return x\n", (Call(args=(np.ones(3),)),)
        for _ in range(10):
            ex.run(RunRequest(code, "f", calls))
        data = tmp / "perf.data"
        record = ["perf", "record", "-e", "page-faults", "-c", "1", "-d", "-a", "-o", str(data)]
        perf = subprocess.Popen(record, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)  # perf is recording
        for _ in range(args.runs):
            ex.run(RunRequest(code, "f", calls))
        time.sleep(0.3)  # the last child exits
        perf.send_signal(signal.SIGINT)
        perf.wait(60)
        script = subprocess.run(
            ["perf", "script", "-i", str(data), "-F", "comm,pid,addr"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        ex.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average at the end: {load()}")
    starts = [r[0] for r in maps]
    kids: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    pids = set()
    for line in script.splitlines():
        fields = line.split()
        if len(fields) < 3 or fields[0] != "python3":
            continue
        pid, addr = int(fields[1]), int(fields[2], 16)
        i = bisect.bisect_right(starts, addr) - 1
        where = maps[i][2] if i >= 0 and addr < maps[i][1] else "mapped after the fork"
        if pid == zygote:
            own[where] += 1
        else:
            kids[where] += 1
            pids.add(pid)
    n = max(len(pids), 1)
    print(f"\n{len(pids)} children: {sum(kids.values()) / n:.0f} page faults each, by mapping")
    for where, count in kids.most_common(8):
        print(f"  {count / n:7.1f}  {where}")
    print(f"the zygote: {sum(own.values()) / args.runs:.0f} page faults per run, by mapping")
    for where, count in own.most_common(4):
        print(f"  {count / args.runs:7.1f}  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
