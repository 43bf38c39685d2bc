"""Enrolment, extensions, overrides, and score_changed after every change that may move a
score that counts: a verdict, a regrade, an answer, an extension, an override."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError

from courses import services
from courses.models import Course, Extension, Membership
from courses.signals import score_changed
from grader.engine.grading import Verdict
from grader.models import Exercise
from grader.services.queue import submission_claim, submission_finish
from grader.services.regrades import submissions_regrade
from questions.services import attempt_create
from tests.courses.conftest import DUE
from tests.factories import (
    assignment_create,
    exercise_get,
    question_get,
    submission_create,
    user_create,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent() -> Iterator[list[tuple[int, int]]]:
    seen: list[tuple[int, int]] = []

    def record(*, assignment_id: int, user_id: int, **_: object) -> None:
        seen.append((assignment_id, user_id))

    score_changed.connect(record, weak=False, dispatch_uid="tests.sent")
    yield seen
    score_changed.disconnect(dispatch_uid="tests.sent")


def test_course_create_makes_its_creator_instructor() -> None:
    teacher = user_create(username="teacher")
    course = services.course_create(title="Attention 101", created_by=teacher)
    again = services.course_create(title="Attention 101")
    assert (course.slug, again.slug) == ("attention-101", "attention-101-2")
    assert course.memberships.get().role == Membership.Role.INSTRUCTOR


def test_course_create_refuses_an_unknown_time_zone() -> None:
    with pytest.raises(ValidationError):
        services.course_create(title="X", time_zone="Mars/Olympus")


def test_membership_set_changes_a_role_without_a_second_row(world) -> None:
    services.membership_set(course=world.course, user=world.ann, role="teaching-assistant")
    assert Membership.objects.get(course=world.course, user=world.ann).role == "teaching-assistant"


def test_assignment_needs_exactly_one_target(world) -> None:
    with pytest.raises(ValidationError):
        services.assignment_create(course=world.course, title="Nothing")
    with pytest.raises(ValidationError):
        services.assignment_create(
            course=world.course, title="Both", exercise=exercise_get(), question=question_get()
        )


def test_hard_deadline_policy_needs_its_deadline(world) -> None:
    with pytest.raises(ValidationError):
        assignment_create(course=world.course, due_at=DUE, late_policy="hard-deadline")


def test_invitation_link_joins_as_student_and_a_reset_disables_it(world) -> None:
    carol = user_create(username="carol")
    membership = services.course_join(token=world.course.invite_token, user=carol)
    assert membership.role == Membership.Role.STUDENT
    # A member following the link keeps their role.
    assert services.course_join(token=world.course.invite_token, user=world.ta).role == (
        Membership.Role.TEACHING_ASSISTANT
    )
    old = world.course.invite_token
    services.course_invite_reset(course=world.course)
    with pytest.raises(services.EnrolmentRefused) as refused:
        services.course_join(token=old, user=user_create(username="dave"))
    assert refused.value.message == services.MSG_INVITE_INVALID


def test_csv_enrolment_by_email_or_username_never_creates_accounts(world) -> None:
    user_create(username="carol", email="carol@example.org")
    user_create(username="twin1", email="twin@example.org")
    user_create(username="twin2", email="twin@example.org")
    text = "email\nCAROL@example.org\nann\nnobody@example.org\ntwin@example.org\n"
    result = services.members_import_csv(course=world.course, text=text)
    assert result.added == ["CAROL@example.org"]
    assert result.already == ["ann"]
    assert result.unknown == ["nobody@example.org", "twin@example.org"]
    assert not Course.objects.filter(memberships__user__username="nobody").exists()


def test_extension_for_a_group_replaces_earlier_ones(world, sent) -> None:
    services.extension_grant(assignment=world.assignment, users=[world.ann], extra_days=1)
    services.extension_grant(
        assignment=world.assignment,
        users=[world.ann, world.bob],
        due_at=DUE + timedelta(days=3),
        note="Lab closed",
        granted_by=world.teacher,
    )
    rows = Extension.objects.filter(assignment=world.assignment).order_by("user__username")
    assert [(e.user.username, e.extra_days, e.note) for e in rows] == [
        ("ann", None, "Lab closed"),
        ("bob", None, "Lab closed"),
    ]


def test_extensions_and_overrides_are_for_students_only(world) -> None:
    with pytest.raises(ValidationError):
        services.extension_grant(assignment=world.assignment, users=[world.ta], extra_days=1)
    with pytest.raises(ValidationError):
        services.score_override_set(
            assignment=world.assignment, user=world.ta, score=1.0, comment="x"
        )


def test_an_override_needs_a_comment(world) -> None:
    with pytest.raises(ValidationError):
        services.score_override_set(
            assignment=world.assignment, user=world.ann, score=1.0, comment="  "
        )


def test_score_changed_after_extension_and_override(
    world, sent, django_capture_on_commit_callbacks
) -> None:
    key = (world.assignment.pk, world.ann.pk)
    with django_capture_on_commit_callbacks(execute=True):
        services.extension_grant(assignment=world.assignment, users=[world.ann], extra_days=1)
    assert sent == [key]
    with django_capture_on_commit_callbacks(execute=True):
        override = services.score_override_set(
            assignment=world.assignment, user=world.ann, score=0.5, comment="Partial"
        )
    with django_capture_on_commit_callbacks(execute=True):
        services.score_override_remove(override=override)
    assert sent == [key, key, key]


def test_nothing_is_sent_before_the_commit(world, sent, django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.extension_grant(assignment=world.assignment, users=[world.ann], extra_days=1)
    assert sent == [] and callbacks


def _finish(submission, score: float) -> None:
    claimed = submission_claim(submission_id=submission.pk, worker="w")
    assert submission_finish(
        submission=claimed,
        verdict=Verdict(status="passed" if score == 1 else "failed", score=score),
    )


def test_a_stored_verdict_sends_score_changed_for_its_assignments(
    world, sent, django_capture_on_commit_callbacks
) -> None:
    other = assignment_create(
        course=world.course, title="Softmax", exercise=exercise_get(slug="stable-softmax")
    )
    row = submission_create(user=world.ann, status="queued")
    with django_capture_on_commit_callbacks(execute=True):
        _finish(row, 1.0)
    assert sent == [(world.assignment.pk, world.ann.pk)]
    assert other.pk != world.assignment.pk
    # Outside any course: nothing to tell.
    stranger = user_create(username="stranger")
    row = submission_create(user=stranger, status="queued")
    with django_capture_on_commit_callbacks(execute=True):
        _finish(row, 1.0)
    assert sent == [(world.assignment.pk, world.ann.pk)]


def test_a_regrade_sends_score_changed_when_each_regraded_verdict_lands(
    world, sent, django_capture_on_commit_callbacks
) -> None:
    row = submission_create(user=world.ann, status="failed", score=0.2)
    submissions_regrade(exercise=Exercise.objects.get(pk=row.exercise_id))
    with django_capture_on_commit_callbacks(execute=True):
        _finish(row, 1.0)
    assert sent == [(world.assignment.pk, world.ann.pk)]


def test_an_answer_sends_score_changed(world, sent, django_capture_on_commit_callbacks) -> None:
    question = question_get()
    assignment = assignment_create(course=world.course, title="Why √d", question=question)
    with django_capture_on_commit_callbacks(execute=True):
        attempt_create(question=question, text="The variance grows with d_k.", user=world.ann)
    assert sent == [(assignment.pk, world.ann.pk)]
