"""Courses, who is in them, the assignments that put an exercise or a question into a course
with its dates and late policy, extensions given to students, and scores overridden by hand.

Times are stored in UTC; a course's time zone says how they are shown and what a "day" of a late
penalty or an extension is (courses.policy)."""

from __future__ import annotations

import secrets
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from courses.policy import LatePolicy, Policy, due_for_student

MSG_TIME_ZONE_UNKNOWN = "Unknown time zone: use an IANA name such as Europe/Paris."
MSG_ONE_TARGET = "An assignment puts exactly one exercise or one question into the course."
MSG_DUE_BEFORE_OPEN = "The due time must come after the opening time."
MSG_HARD_BEFORE_DUE = "The hard deadline must come after the due time."
MSG_HARD_DEADLINE_NEEDED = "Accepting late work until a hard deadline needs that deadline."
MSG_EXTENSION_EMPTY = "An extension gives a new due time or a number of extra days."


def time_zone_validate(value: str) -> None:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ValidationError(MSG_TIME_ZONE_UNKNOWN, code="time_zone") from error


def time_zone_choices() -> list[tuple[str, str]]:
    return [(name, name) for name in sorted(available_timezones())]


def invite_token_new() -> str:
    return secrets.token_urlsafe(18)


class Course(models.Model):
    title = models.CharField(max_length=200)
    slug = models.SlugField(unique=True)
    time_zone = models.CharField(
        max_length=64,
        default="UTC",
        validators=[time_zone_validate],
        help_text="IANA name (Europe/Paris): how times are shown, and what a day late is.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    # The invitation link's secret: anyone signed in who has it joins as a student. Changing it
    # (services.course_invite_reset) disables links already sent.
    invite_token = models.CharField(max_length=40, unique=True, default=invite_token_new)
    invite_enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ("title", "id")

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("courses:course-detail", kwargs={"slug": self.slug})

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.time_zone)

    def local(self, when: datetime | None) -> datetime | None:
        return None if when is None else when.astimezone(self.zone)


class Membership(models.Model):
    class Role(models.TextChoices):
        INSTRUCTOR = "instructor", "Instructor"
        TEACHING_ASSISTANT = "teaching-assistant", "Teaching assistant"
        STUDENT = "student", "Student"

    STAFF_ROLES = (Role.INSTRUCTOR, Role.TEACHING_ASSISTANT)

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="course_memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.STUDENT)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("course", "role", "id")
        constraints = [
            models.UniqueConstraint(fields=("course", "user"), name="membership_course_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.course} ({self.get_role_display()})"

    @property
    def is_course_staff(self) -> bool:
        return self.role in self.STAFF_ROLES


class LatePolicyChoice(models.TextChoices):
    NONE = LatePolicy.NONE.value, "None: nothing counts after the due time"
    PENALTY = LatePolicy.PENALTY.value, "A penalty per day late, up to a cap"
    HARD_DEADLINE = LatePolicy.HARD_DEADLINE.value, "Accepted in full until a hard deadline"


class Assignment(models.Model):
    LatePolicy = LatePolicyChoice

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="assignments")
    title = models.CharField(max_length=200)
    exercise = models.ForeignKey(
        "grader.Exercise",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="assignments",
    )
    question = models.ForeignKey(
        "questions.Question",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="assignments",
    )
    opens_at = models.DateTimeField(null=True, blank=True)
    due_at = models.DateTimeField(null=True, blank=True)
    late_policy = models.CharField(
        max_length=20, choices=LatePolicyChoice.choices, default=LatePolicyChoice.NONE
    )
    penalty_per_day = models.FloatField(
        default=0.0,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Fraction of the score taken off per day late (0.1 is 10 %).",
    )
    penalty_cap = models.FloatField(
        default=1.0,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="The most a late submission loses, as a fraction.",
    )
    hard_deadline = models.DateTimeField(null=True, blank=True)
    # The similarity report's threshold (courses.similarity), per assignment.
    similarity_threshold = models.FloatField(
        default=0.8, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("due_at", "id")
        constraints = [
            models.CheckConstraint(
                condition=(Q(exercise__isnull=False) & Q(question__isnull=True))
                | (Q(exercise__isnull=True) & Q(question__isnull=False)),
                name="assignment_one_target",
            )
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.course})"

    def get_absolute_url(self) -> str:
        return reverse(
            "courses:assignment-detail", kwargs={"slug": self.course.slug, "pk": self.pk}
        )

    def clean(self) -> None:
        if (self.exercise_id is None) == (self.question_id is None):
            raise ValidationError(MSG_ONE_TARGET, code="one_target")
        if self.opens_at and self.due_at and self.due_at <= self.opens_at:
            raise ValidationError({"due_at": MSG_DUE_BEFORE_OPEN})
        if self.late_policy == LatePolicy.HARD_DEADLINE:
            if self.hard_deadline is None:
                raise ValidationError({"hard_deadline": MSG_HARD_DEADLINE_NEEDED})
            if self.due_at and self.hard_deadline < self.due_at:
                raise ValidationError({"hard_deadline": MSG_HARD_BEFORE_DUE})

    @property
    def target(self) -> models.Model:
        return self.exercise if self.exercise_id is not None else self.question

    @property
    def target_url(self) -> str:
        return self.target.get_absolute_url()

    def is_open(self, *, now: datetime | None = None) -> bool:
        return self.opens_at is None or (now or timezone.now()) >= self.opens_at

    def policy_for(self, extension: Extension | None = None) -> Policy:
        """The late policy with one student's due time (their extension applied)."""
        due = due_for_student(
            due_at=self.due_at,
            time_zone=self.course.time_zone,
            extension_due_at=extension.due_at if extension else None,
            extension_days=extension.extra_days if extension else None,
        )
        hard = self.hard_deadline
        if hard is not None and due is not None:
            hard = max(hard, due)  # an extension past the hard deadline moves it too
        return Policy(
            kind=LatePolicy(self.late_policy),
            due_at=due,
            time_zone=self.course.time_zone,
            penalty_per_day=self.penalty_per_day,
            penalty_cap=self.penalty_cap,
            hard_deadline=hard,
        )


class Extension(models.Model):
    """More time for one student on one assignment (a group gets one row each)."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="extensions")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="course_extensions"
    )
    due_at = models.DateTimeField(null=True, blank=True, help_text="A new due time, or…")
    extra_days = models.PositiveSmallIntegerField(
        null=True, blank=True, validators=[MaxValueValidator(365)], help_text="…extra days."
    )
    note = models.TextField(blank=True)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("assignment", "id")
        constraints = [
            models.UniqueConstraint(fields=("assignment", "user"), name="extension_one_per_user"),
            models.CheckConstraint(
                condition=Q(due_at__isnull=False) | Q(extra_days__isnull=False),
                name="extension_not_empty",
            ),
        ]

    def __str__(self) -> str:
        return f"Extension for {self.user} on {self.assignment}"

    def clean(self) -> None:
        if self.due_at is None and not self.extra_days:
            raise ValidationError(MSG_EXTENSION_EMPTY, code="empty")


class ScoreOverride(models.Model):
    """A score set by hand, with the reason shown to the student; deleting it undoes it."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="overrides")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="score_overrides"
    )
    score = models.FloatField(validators=[MinValueValidator(0.0), MaxValueValidator(1.0)])
    comment = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("assignment", "id")
        constraints = [
            models.UniqueConstraint(fields=("assignment", "user"), name="override_one_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.score:.2f} for {self.user} on {self.assignment}"
