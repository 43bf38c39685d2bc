"""The names other apps (the learning platform's integration) build on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from courses import selectors, services
from courses.models import Membership
from courses.signals import score_changed
from tests.factories import exercise_get, student_create, submission_create

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


def test_the_contract_end_to_end(django_capture_on_commit_callbacks) -> None:
    teacher = student_create(username="teach")
    course = services.course_create(
        title="Attention 101", time_zone="Europe/Paris", created_by=teacher
    )
    ann = student_create(username="ann")
    membership = services.membership_set(course=course, user=ann, role=Membership.Role.STUDENT)
    membership.created_at = T0
    membership.save()
    assignment = services.assignment_create(
        course=course,
        title="Attention",
        exercise=exercise_get(),
        due_at=datetime(2026, 4, 1, tzinfo=UTC),
    )
    assert assignment.get_absolute_url() == f"/courses/{course.slug}/assignments/{assignment.pk}/"
    row = submission_create(
        user=ann, status="passed", score=0.75, received_at=datetime(2026, 3, 5, tzinfo=UTC)
    )
    counting = selectors.score_that_counts(assignment=assignment, user=ann)
    assert counting is not None
    assert (counting.score, counting.submission_id, counting.overridden) == (0.75, row.pk, False)
    seen = []
    score_changed.connect(
        lambda **kw: seen.append((kw["assignment_id"], kw["user_id"])), weak=False, dispatch_uid="t"
    )
    try:
        with django_capture_on_commit_callbacks(execute=True):
            services.score_override_set(
                assignment=assignment, user=ann, score=1.0, comment="Oral exam"
            )
    finally:
        score_changed.disconnect(dispatch_uid="t")
    assert seen == [(assignment.pk, ann.pk)]
