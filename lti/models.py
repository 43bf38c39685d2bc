"""What ties the LTI library's records (django-lti's lti_tool: registrations, deployments,
contexts, resource links, platform users) to this site's courses, and what was last sent to a
platform's gradebook.

A platform's context is one Course; a resource link (or a deep-linked item) is one Assignment,
with the platform's line item that receives its scores; a GradeSync row per (assignment, user)
remembers the score last sent, so an identical one is not sent again, and the platform's error
text when sending failed."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from lti_tool.models import LtiContext, LtiResourceLink


class CourseContext(models.Model):
    context = models.OneToOneField(LtiContext, on_delete=models.CASCADE, related_name="course_link")
    course = models.OneToOneField(
        "courses.Course", on_delete=models.CASCADE, related_name="lti_context"
    )
    roster_synced_at = models.DateTimeField(null=True, blank=True)
    roster_error = models.TextField(blank=True)

    def __str__(self) -> str:
        return f"{self.context} -> {self.course}"


class AssignmentLink(models.Model):
    assignment = models.OneToOneField(
        "courses.Assignment", on_delete=models.CASCADE, related_name="lti_link"
    )
    context = models.ForeignKey(LtiContext, on_delete=models.CASCADE, related_name="+")
    resource_link = models.OneToOneField(
        LtiResourceLink,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="assignment_link",
    )
    # The platform's line item for this assignment (from the launch's AGS claim): scores go to
    # <line_item_url>/scores. Blank until a launch tells it.
    line_item_url = models.URLField(max_length=500, blank=True)
    # The platform's scale: a score that counts in [0, 1] is sent as score * score_maximum.
    score_maximum = models.FloatField(default=100.0)

    def __str__(self) -> str:
        return f"{self.assignment} <- {self.resource_link or 'deep link'}"


class GradeSync(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"

    assignment = models.ForeignKey(
        "courses.Assignment", on_delete=models.CASCADE, related_name="lti_grade_syncs"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lti_grade_syncs"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    # What the platform last accepted: None until a first send succeeds.
    sent_score = models.FloatField(null=True, blank=True)
    sent_activity_progress = models.CharField(max_length=20, blank=True)
    sent_grading_progress = models.CharField(max_length=20, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # The platform's own answer when the last send failed, shown to instructors.
    last_error = models.TextField(blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("assignment", "user"), name="lti_gradesync_once")
        ]

    def __str__(self) -> str:
        return f"{self.user} / {self.assignment}: {self.status}"
