"""What every benchmark prints the same way (the load average, percentiles), the process table
some of them read (its tree: grader.engine.sandbox.launcher.process_tree), the project's root and
the correct attention every benchmark grades (bench/correct_attention.py, read as a submission)."""

from __future__ import annotations

import os
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")

ROOT = Path(__file__).resolve().parents[1]
CORRECT = (ROOT / "bench" / "correct_attention.py").read_text()


def load() -> str:
    """The 1, 5 and 15 minute load averages, as /proc/loadavg has them."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def processes() -> dict[int, tuple[int, str, float]]:
    """pid -> (parent pid, command name, CPU seconds used by it and its reaped children)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        found[int(entry.name)] = (int(fields[1]), name, sum(map(int, fields[11:15])) / _TICK)
    return found
