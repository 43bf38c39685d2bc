"""Start a rate-limit test inside one window of the wall clock.

The limits count in fixed windows (common.ratelimit: the key holds ``now // period``), so a
test whose requests straddle a window's end starts counting afresh half-way and sees more
requests pass than the limit. Every period the tests use (a minute, an hour, a day) ends on a
minute's end, so waiting out a minute's last seconds keeps a quick test in one window.
"""

from __future__ import annotations

import time


def rate_window_fresh(*, margin_seconds: float = 5.0, period_seconds: int = 60) -> None:
    """Sleep into the next window if fewer than ``margin_seconds`` are left of this one."""
    left = period_seconds - time.time() % period_seconds
    if left < margin_seconds:
        time.sleep(left + 0.05)
