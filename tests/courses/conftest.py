"""A course with an instructor, a teaching assistant, two students and an assignment of the
attention exercise due 1 March 2026 23:59 in Paris, 10 % a day late up to 30 %."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.factories import assignment_create, course_create, membership_create, user_create

ENROLLED = datetime(2026, 2, 1, tzinfo=UTC)
DUE = datetime(2026, 3, 1, 22, 59, tzinfo=UTC)


@dataclass
class World:
    course: Any
    assignment: Any
    teacher: Any
    ta: Any
    ann: Any
    bob: Any


@pytest.fixture
def world(db: None) -> World:
    teacher = user_create(username="teacher")
    course = course_create(title="Attention 101", time_zone="Europe/Paris", instructor=teacher)
    ta = user_create(username="ta")
    membership_create(course=course, user=ta, role="teaching-assistant")
    ann = user_create(username="ann", email="ann@example.org")
    bob = user_create(username="bob", email="bob@example.org")
    for student in (ann, bob):
        membership_create(course=course, user=student, when=ENROLLED)
    assignment = assignment_create(
        course=course,
        title="Attention",
        due_at=DUE,
        late_policy="penalty",
        penalty_per_day=0.1,
        penalty_cap=0.3,
    )
    return World(course=course, assignment=assignment, teacher=teacher, ta=ta, ann=ann, bob=bob)
