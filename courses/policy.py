"""The late policy's arithmetic: when a piece of work is due for one student, how late a
submission is, and what that costs. Pure (no Django): times are aware datetimes, days are the
course's calendar days (a day added to 23:59 local time is 23:59 local time the next day, also
across a daylight-saving change)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo


class LatePolicy(StrEnum):
    NONE = "none"  # nothing counts after the due time
    PENALTY = "penalty"  # a penalty per day late, up to a cap
    HARD_DEADLINE = "hard-deadline"  # accepted in full until a hard deadline


def days_add(*, when: datetime, days: int, time_zone: str) -> datetime:
    """``when`` moved ``days`` calendar days in ``time_zone``, same wall-clock time, in UTC.

    A wall-clock time that does not exist that day (the spring-forward gap) lands on the
    instant after the gap (zoneinfo's fold rule for non-existent times, then normalised).
    """
    tz = ZoneInfo(time_zone)
    local = when.astimezone(tz)
    moved = local.replace(tzinfo=None) + timedelta(days=days)
    # Round-trip through UTC to resolve a wall-clock time in a gap or a fold.
    return moved.replace(tzinfo=tz).astimezone(ZoneInfo("UTC"))


def days_late(*, submitted_at: datetime, due_at: datetime, time_zone: str) -> int:
    """0 if on time, else the number of started calendar days after the due time: one second
    late is one day late, and a day late ends at the due time's wall-clock time a day later."""
    if submitted_at <= due_at:
        return 0
    # A first guess from elapsed time, then corrected on the wall clock (a DST day is 23 h or
    # 25 h long, so elapsed hours alone can be one off).
    guess = max(1, math.ceil((submitted_at - due_at).total_seconds() / 86400))
    while guess > 1 and submitted_at <= days_add(when=due_at, days=guess - 1, time_zone=time_zone):
        guess -= 1
    while submitted_at > days_add(when=due_at, days=guess, time_zone=time_zone):
        guess += 1
    return guess


@dataclass(frozen=True)
class Policy:
    """An assignment's late policy with one student's due time (extension applied)."""

    kind: LatePolicy
    due_at: datetime | None
    time_zone: str = "UTC"
    penalty_per_day: float = 0.0  # a fraction of the score, e.g. 0.1 for 10 % a day
    penalty_cap: float = 1.0  # the most a late submission can lose, as a fraction
    hard_deadline: datetime | None = None


@dataclass(frozen=True)
class Lateness:
    accepted: bool  # False: it does not count at all
    days_late: int
    penalty: float  # the fraction taken off the score, in [0, 1]

    def apply(self, score: float) -> float:
        return max(0.0, min(1.0, score * (1.0 - self.penalty)))


ON_TIME = Lateness(accepted=True, days_late=0, penalty=0.0)
REFUSED = Lateness(accepted=False, days_late=0, penalty=1.0)


def lateness(*, policy: Policy, submitted_at: datetime) -> Lateness:
    """What the policy makes of a submission received at ``submitted_at``."""
    if policy.due_at is None or submitted_at <= policy.due_at:
        return ON_TIME
    late = days_late(submitted_at=submitted_at, due_at=policy.due_at, time_zone=policy.time_zone)
    if policy.kind == LatePolicy.PENALTY:
        penalty = min(max(policy.penalty_cap, 0.0), late * max(policy.penalty_per_day, 0.0), 1.0)
        return Lateness(accepted=True, days_late=late, penalty=penalty)
    if policy.kind == LatePolicy.HARD_DEADLINE:
        if policy.hard_deadline is not None and submitted_at <= policy.hard_deadline:
            return Lateness(accepted=True, days_late=late, penalty=0.0)
        return Lateness(accepted=False, days_late=late, penalty=1.0)
    return Lateness(accepted=False, days_late=late, penalty=1.0)


def due_for_student(
    *,
    due_at: datetime | None,
    time_zone: str,
    extension_due_at: datetime | None = None,
    extension_days: int | None = None,
) -> datetime | None:
    """The student's due time: an extension's new due time, or the due time moved by its
    extra calendar days; never earlier than the assignment's own due time."""
    if due_at is None:
        return None
    if extension_due_at is not None:
        return max(due_at, extension_due_at)
    if extension_days:
        return max(due_at, days_add(when=due_at, days=extension_days, time_zone=time_zone))
    return due_at
