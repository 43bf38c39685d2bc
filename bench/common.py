"""What every benchmark prints the same way: the load average, percentiles."""

from __future__ import annotations

from pathlib import Path


def load() -> str:
    """The 1, 5 and 15 minute load averages, as /proc/loadavg has them."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]
