"""Writes of courses: creating courses and assignments, enrolment (invitation link, CSV,
the learning platform's roster through membership_set), extensions and score overrides.

Each write that may change a score that counts sends courses.signals.score_changed after
its commit."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify

from courses.models import (
    MSG_EXTENSION_EMPTY,
    Assignment,
    Course,
    Extension,
    Membership,
    ScoreOverride,
    invite_token_new,
)
from courses.signals import score_changed_send

MSG_INVITE_INVALID = "This invitation link no longer works: ask your instructor for a new one."
MSG_NOT_A_STUDENT = "Extensions and overrides are for students of this course."
MSG_OVERRIDE_COMMENT = "Say why the score is overridden: the student reads it."
MSG_CSV_TOO_MANY = "At most {limit} lines at once."
CSV_MAX_LINES = 2000


class EnrolmentRefused(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _slug_unique(title: str) -> str:
    base = slugify(title)[:40] or "course"
    slug, n = base, 1
    while Course.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


@transaction.atomic
def course_create(
    *,
    title: str,
    time_zone: str = "UTC",
    created_by: AbstractBaseUser | None = None,
    slug: str | None = None,
) -> Course:
    """A course; its creator becomes its first instructor."""
    course = Course(
        title=title, slug=slug or _slug_unique(title), time_zone=time_zone, created_by=created_by
    )
    course.full_clean()
    course.save()
    if created_by is not None:
        membership_set(course=course, user=created_by, role=Membership.Role.INSTRUCTOR)
    return course


def membership_set(*, course: Course, user: AbstractBaseUser, role: str) -> Membership:
    """Put ``user`` in ``course`` with ``role`` (added, or their role changed). The
    learning platform's roster sync calls this for each member it is told about."""
    role = Membership.Role(role)
    membership, created = Membership.objects.get_or_create(
        course=course, user=user, defaults={"role": role}
    )
    if not created and membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    # No score_changed: only work made while enrolled counts, so a new member has none yet
    # (and a roster sync of a whole class would otherwise send one per student and assignment).
    return membership


def membership_remove(*, course: Course, user: AbstractBaseUser) -> bool:
    return bool(Membership.objects.filter(course=course, user=user).delete()[0])


def course_invite_reset(*, course: Course) -> Course:
    """A new invitation link; the old one stops working."""
    course.invite_token = invite_token_new()
    course.save(update_fields=["invite_token"])
    return course


def course_join(*, token: str, user: AbstractBaseUser) -> Membership:
    """Join the course whose invitation link this is, as a student (a member already keeps
    their role)."""
    course = Course.objects.filter(invite_token=token, invite_enabled=True).first()
    if course is None or not token:
        raise EnrolmentRefused(MSG_INVITE_INVALID)
    existing = Membership.objects.filter(course=course, user=user).first()
    if existing is not None:
        return existing
    return membership_set(course=course, user=user, role=Membership.Role.STUDENT)


@dataclass
class CsvEnrolment:
    added: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


def members_import_csv(
    *, course: Course, text: str, role: str = Membership.Role.STUDENT
) -> CsvEnrolment:
    """Enrol the existing accounts named in ``text`` (one email or username a line, the first
    column of a CSV); names that match no account are listed back, never created."""
    result = CsvEnrolment()
    lines = [row[0].strip() for row in csv.reader(io.StringIO(text)) if row and row[0].strip()]
    if len(lines) > CSV_MAX_LINES:
        raise ValidationError(MSG_CSV_TOO_MANY.format(limit=CSV_MAX_LINES))
    User = get_user_model()
    with transaction.atomic():
        for name in dict.fromkeys(lines):
            users = list(User.objects.filter(Q(username=name) | Q(email__iexact=name))[:2])
            if len(users) != 1:  # none, or an email two accounts share: never guess
                if name.lower() not in ("email", "username"):  # a header line
                    result.unknown.append(name)
                continue
            user = users[0]
            if Membership.objects.filter(course=course, user=user).exists():
                result.already.append(name)
                continue
            membership_set(course=course, user=user, role=role)
            result.added.append(name)
    return result


def assignment_create(
    *,
    course: Course,
    title: str,
    exercise: Any = None,
    question: Any = None,
    opens_at: datetime | None = None,
    due_at: datetime | None = None,
    late_policy: str = Assignment.LatePolicy.NONE,
    penalty_per_day: float = 0.0,
    penalty_cap: float = 1.0,
    hard_deadline: datetime | None = None,
) -> Assignment:
    assignment = Assignment(
        course=course,
        title=title,
        exercise=exercise,
        question=question,
        opens_at=opens_at,
        due_at=due_at,
        late_policy=late_policy,
        penalty_per_day=penalty_per_day,
        penalty_cap=penalty_cap,
        hard_deadline=hard_deadline,
    )
    assignment.full_clean()
    assignment.save()
    return assignment


def assignment_update(*, assignment: Assignment, **fields: Any) -> Assignment:
    """Change an assignment's dates or policy; every student's score may change."""
    for name, value in fields.items():
        setattr(assignment, name, value)
    assignment.full_clean()
    with transaction.atomic():
        assignment.save()
        for user_id in assignment.course.memberships.filter(
            role=Membership.Role.STUDENT
        ).values_list("user_id", flat=True):
            score_changed_send(assignment_id=assignment.pk, user_id=user_id)
    return assignment


def _students(*, assignment: Assignment, users: Iterable[AbstractBaseUser]) -> list[Any]:
    users = list(users)
    students = set(
        Membership.objects.filter(
            course_id=assignment.course_id,
            user__in=users,
            role=Membership.Role.STUDENT,
        ).values_list("user_id", flat=True)
    )
    if not users or any(u.pk not in students for u in users):
        raise ValidationError(MSG_NOT_A_STUDENT, code="not_a_student")
    return users


@transaction.atomic
def extension_grant(
    *,
    assignment: Assignment,
    users: Iterable[AbstractBaseUser],
    due_at: datetime | None = None,
    extra_days: int | None = None,
    note: str = "",
    granted_by: AbstractBaseUser | None = None,
) -> list[Extension]:
    """Give each of ``users`` (one student, or a group) a new due time or extra days; a
    student's earlier extension on this assignment is replaced."""
    if due_at is None and not extra_days:
        raise ValidationError(MSG_EXTENSION_EMPTY, code="empty")
    granted = []
    for user in _students(assignment=assignment, users=users):
        extension, _ = Extension.objects.update_or_create(
            assignment=assignment,
            user=user,
            defaults={
                "due_at": due_at,
                "extra_days": extra_days or None,
                "note": note,
                "granted_by": granted_by,
            },
        )
        extension.full_clean()
        granted.append(extension)
        score_changed_send(assignment_id=assignment.pk, user_id=user.pk)
    return granted


@transaction.atomic
def extension_revoke(*, extension: Extension) -> None:
    assignment_id, user_id = extension.assignment_id, extension.user_id
    extension.delete()
    score_changed_send(assignment_id=assignment_id, user_id=user_id)


@transaction.atomic
def score_override_set(
    *,
    assignment: Assignment,
    user: AbstractBaseUser,
    score: float,
    comment: str,
    created_by: AbstractBaseUser | None = None,
) -> ScoreOverride:
    """Set the score that counts by hand, with the reason shown to the student; who and when
    are kept. A second override replaces the first."""
    if not comment.strip():
        raise ValidationError({"comment": MSG_OVERRIDE_COMMENT})
    _students(assignment=assignment, users=[user])
    override = ScoreOverride.objects.filter(assignment=assignment, user=user).first()
    override = override or ScoreOverride(assignment=assignment, user=user)
    override.score = score
    override.comment = comment.strip()
    override.created_by = created_by
    override.created_at = timezone.now()
    override.full_clean()
    override.save()
    score_changed_send(assignment_id=assignment.pk, user_id=user.pk)
    return override


@transaction.atomic
def score_override_remove(*, override: ScoreOverride) -> None:
    """Undo an override: the policy's score counts again."""
    assignment_id, user_id = override.assignment_id, override.user_id
    override.delete()
    score_changed_send(assignment_id=assignment_id, user_id=user_id)
