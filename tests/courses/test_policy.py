"""The late policy's arithmetic: days late on the course's calendar, penalties and their cap,
hard deadlines, extensions, and the daylight-saving days that are 23 or 25 hours long."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from courses.policy import (
    LatePolicy,
    Policy,
    days_add,
    days_late,
    due_for_student,
    lateness,
)

PARIS = "Europe/Paris"
# Paris moves its clocks forward on 29 March 2026 (02:00 -> 03:00) and back on 25 October.
DUE = datetime(2026, 3, 1, 22, 59, tzinfo=UTC)  # 23:59 in Paris (UTC+1)
BEFORE_SPRING = datetime(2026, 3, 28, 22, 59, tzinfo=UTC)  # Saturday 23:59 in Paris (UTC+1)


def at(when: str, tz: str = PARIS) -> datetime:
    return datetime.fromisoformat(when).replace(tzinfo=ZoneInfo(tz)).astimezone(UTC)


def penalty_policy(due: datetime = DUE, per_day: float = 0.1, cap: float = 0.3) -> Policy:
    return Policy(
        kind=LatePolicy.PENALTY,
        due_at=due,
        time_zone=PARIS,
        penalty_per_day=per_day,
        penalty_cap=cap,
    )


def test_on_time_costs_nothing() -> None:
    late = lateness(policy=penalty_policy(), submitted_at=DUE)
    assert (late.accepted, late.days_late, late.penalty) == (True, 0, 0.0)
    assert late.apply(0.8) == 0.8


def test_one_second_late_is_one_day_late() -> None:
    late = lateness(policy=penalty_policy(), submitted_at=DUE + timedelta(seconds=1))
    assert (late.days_late, late.penalty) == (1, 0.1)
    assert late.apply(1.0) == pytest.approx(0.9)


def test_a_day_late_ends_at_the_due_wall_clock_time() -> None:
    assert days_late(submitted_at=DUE + timedelta(days=1), due_at=DUE, time_zone=PARIS) == 1
    assert days_late(submitted_at=at("2026-03-03T00:00"), due_at=DUE, time_zone=PARIS) == 2


def test_the_penalty_stops_at_its_cap() -> None:
    late = lateness(policy=penalty_policy(), submitted_at=DUE + timedelta(days=10))
    assert (late.days_late, late.penalty) == (10, 0.3)
    assert late.apply(1.0) == pytest.approx(0.7)


def test_no_late_policy_refuses_late_work() -> None:
    policy = Policy(kind=LatePolicy.NONE, due_at=DUE, time_zone=PARIS)
    assert not lateness(policy=policy, submitted_at=DUE + timedelta(minutes=1)).accepted
    assert lateness(policy=policy, submitted_at=DUE).accepted


def test_hard_deadline_accepts_in_full_until_it() -> None:
    hard = DUE + timedelta(days=2)
    policy = Policy(kind=LatePolicy.HARD_DEADLINE, due_at=DUE, time_zone=PARIS, hard_deadline=hard)
    inside = lateness(policy=policy, submitted_at=hard)
    assert (inside.accepted, inside.penalty, inside.days_late) == (True, 0.0, 2)
    assert not lateness(policy=policy, submitted_at=hard + timedelta(seconds=1)).accepted


def test_no_due_time_is_never_late() -> None:
    policy = Policy(kind=LatePolicy.NONE, due_at=None)
    assert lateness(policy=policy, submitted_at=datetime(2099, 1, 1, tzinfo=UTC)).accepted


def test_a_day_across_spring_forward_is_23_hours() -> None:
    # Saturday 23:59 + 1 day = Sunday 23:59 in Paris, now UTC+2: 23 hours later.
    moved = days_add(when=BEFORE_SPRING, days=1, time_zone=PARIS)
    assert moved == at("2026-03-29T23:59")
    assert moved - BEFORE_SPRING == timedelta(hours=23)
    # 23 h 30 min after the due time is still within the first day late, not the second.
    submitted = BEFORE_SPRING + timedelta(hours=23, minutes=-30)
    assert days_late(submitted_at=submitted, due_at=BEFORE_SPRING, time_zone=PARIS) == 1
    assert (
        days_late(
            submitted_at=BEFORE_SPRING + timedelta(hours=23, minutes=30),
            due_at=BEFORE_SPRING,
            time_zone=PARIS,
        )
        == 2
    )


def test_a_day_across_fall_back_is_25_hours() -> None:
    due = at("2026-10-24T23:59")
    moved = days_add(when=due, days=1, time_zone=PARIS)
    assert moved - due == timedelta(hours=25)
    # 24 h 30 min later is still the first day late on the Paris calendar.
    assert (
        days_late(submitted_at=due + timedelta(hours=24, minutes=30), due_at=due, time_zone=PARIS)
        == 1
    )


def test_in_utc_a_day_is_24_hours() -> None:
    assert (
        days_late(
            submitted_at=BEFORE_SPRING + timedelta(hours=23, minutes=30),
            due_at=BEFORE_SPRING,
            time_zone="UTC",
        )
        == 1
    )
    assert days_add(when=BEFORE_SPRING, days=1, time_zone="UTC") - BEFORE_SPRING == timedelta(
        days=1
    )


def test_a_wall_clock_time_in_the_gap_lands_after_it() -> None:
    # 02:30 on 29 March does not exist in Paris: the extension lands at 03:30 (UTC 01:30).
    due = at("2026-03-28T02:30")
    assert days_add(when=due, days=1, time_zone=PARIS) == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)


def test_extra_days_keep_the_wall_clock_time() -> None:
    due = due_for_student(due_at=BEFORE_SPRING, time_zone=PARIS, extension_days=2)
    assert due == at("2026-03-30T23:59")


def test_an_extension_due_time_replaces_the_due_time() -> None:
    new = DUE + timedelta(days=3)
    assert due_for_student(due_at=DUE, time_zone=PARIS, extension_due_at=new) == new


def test_an_extension_never_brings_the_due_time_forward() -> None:
    earlier = DUE - timedelta(days=3)
    assert due_for_student(due_at=DUE, time_zone=PARIS, extension_due_at=earlier) == DUE


def test_late_days_count_from_the_extended_due_time() -> None:
    extended = due_for_student(due_at=BEFORE_SPRING, time_zone=PARIS, extension_days=1)
    policy = penalty_policy(due=extended)
    on_time = lateness(policy=policy, submitted_at=at("2026-03-29T23:00"))
    assert on_time.penalty == 0.0
    late = lateness(policy=policy, submitted_at=at("2026-03-30T00:30"))
    assert (late.days_late, late.penalty) == (1, 0.1)
