"""Writes for LTI: accepting a launch (user, course, membership, assignment), creating an
assignment from deep linking, sending a score to the platform's line item, synchronising a
roster, rotating the tool's keys."""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import requests
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from lti_tool.models import Key, LtiContext, LtiLaunch, LtiUser
from lti_tool.services.nrps import fetch_member_data
from lti_tool.utils import sync_data_from_launch
from pylti1p3.exception import LtiException
from pylti1p3.service_connector import ServiceConnector

from courses.models import Assignment, Course, Membership
from courses.selectors import score_that_counts
from courses.services import assignment_create, course_create, membership_set
from grader.publish import task_publish
from lti.errors import MSG_DEEP_LINK_STAFF_ONLY, MSG_ROLE_UNKNOWN, GradeSendFailed, LtiRefused
from lti.models import AssignmentLink, CourseContext, GradeSync
from lti.roles import course_role_for

log = logging.getLogger(__name__)

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
MEMBERSHIP_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
# A line item's maximum when the tool creates it (deep linking): a percentage.
SCORE_MAXIMUM = 100.0
ASSIGNMENT_CUSTOM = "assignment_id"
# Bounds every call to a platform: a slow gradebook must not hold a worker.
PLATFORM_TIMEOUT_SECONDS = 10.0
USER_AGENT = "attention-quiz-lti-tool"
# What a platform's refusal or silence raises from the library and from requests.
PLATFORM_ERRORS = (LtiException, requests.RequestException)


@dataclass(frozen=True)
class LaunchAccepted:
    user: AbstractBaseUser
    course: Course
    role: Membership.Role
    assignment: Assignment | None


# --- Users, by the platform's subject id ------------------------------------------------------


def _username_for(*, issuer: str, sub: str) -> str:
    # Stable and unique per (issuer, subject); the platform's names are display only.
    digest = hashlib.sha256(f"{issuer}\n{sub}".encode()).hexdigest()[:20]
    return f"lti-{digest}"


def lti_user_link(*, lti_user: LtiUser) -> AbstractBaseUser:
    """This site's user for a platform user: the one linked to it, else the one any
    registration of the same issuer linked to this subject, else a new one. Never by email."""
    if lti_user.auth_user_id is not None:
        return lti_user.auth_user  # type: ignore[return-value]
    issuer = lti_user.registration.issuer
    sibling = (
        LtiUser.objects.filter(
            registration__issuer=issuer, sub=lti_user.sub, auth_user__isnull=False
        )
        .select_related("auth_user")
        .first()
    )
    if sibling is not None:
        user = sibling.auth_user
    else:
        user_model = get_user_model()
        user, _created = user_model.objects.get_or_create(
            username=_username_for(issuer=issuer, sub=lti_user.sub),
            defaults={
                "first_name": (lti_user.given_name or "")[:150],
                "last_name": (lti_user.family_name or "")[:150],
                "email": lti_user.email or "",
            },
        )
        if _created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
    lti_user.auth_user = user
    lti_user.save(update_fields=["auth_user", "datetime_modified"])
    return user  # type: ignore[return-value]


# --- Courses and assignments ------------------------------------------------------------------


def course_for_context(*, context: LtiContext) -> Course:
    """The course tied to a platform's context, created on its first launch."""
    link = CourseContext.objects.filter(context=context).select_related("course").first()
    if link is not None:
        return link.course
    course = course_create(title=(context.title or context.label or "LTI course")[:200])
    CourseContext.objects.create(context=context, course=course)
    return course


def _assignment_for_launch(*, launch: LtiLaunch, context: LtiContext) -> Assignment | None:
    resource_link = launch.resource_link
    link = AssignmentLink.objects.filter(resource_link=resource_link).first()
    if link is None:
        # A deep-linked item: the platform hands back the id the tool put in its custom claim.
        wanted = launch.get_custom_claim(ASSIGNMENT_CUSTOM)
        if wanted and str(wanted).isdigit():
            link = AssignmentLink.objects.filter(
                assignment_id=int(wanted), context=context, resource_link__isnull=True
            ).first()
            if link is not None:
                link.resource_link = resource_link
    if link is None:
        return None
    line_item = (launch.ags_claim or {}).get("lineitem") or ""
    if line_item and line_item != link.line_item_url:
        link.line_item_url = line_item
    link.save()
    return link.assignment


def assignment_link(
    *, assignment: Assignment, launch: LtiLaunch, score_maximum: float = SCORE_MAXIMUM
) -> AssignmentLink:
    """Tie an existing assignment to the launch's resource link (an instructor's pick)."""
    link, _created = AssignmentLink.objects.update_or_create(
        assignment=assignment,
        defaults={
            "context": launch.context,
            "resource_link": launch.resource_link,
            "line_item_url": (launch.ags_claim or {}).get("lineitem") or "",
            "score_maximum": score_maximum,
        },
    )
    return link


# --- The launch -------------------------------------------------------------------------------


def launch_accept(*, launch: LtiLaunch) -> LaunchAccepted:
    """Sign-in, enrolment and assignment for a validated launch; LtiRefused (nothing written)
    for a role this tool does not know."""
    role = course_role_for(launch.roles_claim or [])
    if role is None:
        raise LtiRefused(MSG_ROLE_UNKNOWN)
    if launch.is_deep_link_launch and role == Membership.Role.STUDENT:
        raise LtiRefused(MSG_DEEP_LINK_STAFF_ONLY)
    with transaction.atomic():
        sync_data_from_launch(launch)
        user = lti_user_link(lti_user=launch.user)
        context = launch.context
        course = course_for_context(context=context)
        membership_set(course=course, user=user, role=role)
        assignment = None
        if launch.is_resource_launch:
            assignment = _assignment_for_launch(launch=launch, context=context)
    return LaunchAccepted(user=user, course=course, role=role, assignment=assignment)


def deep_link_assignment_create(
    *,
    launch: LtiLaunch,
    title: str,
    exercise: Any = None,
    question: Any = None,
    due_at: datetime | None = None,
) -> Assignment:
    """The assignment an instructor picked in a deep-linking launch, waiting for its link."""
    with transaction.atomic():
        course = course_for_context(context=launch.context)
        assignment = assignment_create(
            course=course, title=title, exercise=exercise, question=question, due_at=due_at
        )
        AssignmentLink.objects.create(
            assignment=assignment, context=launch.context, score_maximum=SCORE_MAXIMUM
        )
    return assignment


# --- Grade passback ---------------------------------------------------------------------------


class _TimedSession(requests.Session):
    def request(self, *args: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        kwargs.setdefault("timeout", PLATFORM_TIMEOUT_SECONDS)
        return super().request(*args, **kwargs)


def _connector(*, context: LtiContext) -> ServiceConnector:
    session = _TimedSession()
    # Header values are Latin-1: the product's name (with its symbols) is not.
    session.headers["User-Agent"] = USER_AGENT
    return ServiceConnector(context.deployment.registration.to_registration(), session)


def _scores_url(line_item_url: str) -> str:
    path, _, query = line_item_url.partition("?")
    return f"{path.rstrip('/')}/scores" + (f"?{query}" if query else "")


def grade_send(*, assignment_id: int, user_id: int) -> GradeSync | None:
    """Send the score that counts to the platform's line item, unless the platform already has
    exactly that score; GradeSendFailed (row marked failed, the platform's text kept) if the
    platform refuses or does not answer. None when there is nothing to send to."""
    link = (
        AssignmentLink.objects.filter(assignment_id=assignment_id)
        .select_related("assignment", "context__deployment__registration")
        .first()
    )
    if link is None or not link.line_item_url:
        return None
    registration = link.context.deployment.registration
    lti_user = LtiUser.objects.filter(registration=registration, auth_user_id=user_id).first()
    if lti_user is None:
        return None
    user = get_user_model().objects.get(pk=user_id)
    counting = score_that_counts(assignment=link.assignment, user=user)
    if counting is None:
        return None
    score = round(float(counting.score) * link.score_maximum, 4)
    activity, grading = "Completed", "FullyGraded"
    row, _created = GradeSync.objects.get_or_create(assignment_id=assignment_id, user_id=user_id)
    if (
        row.status == GradeSync.Status.SENT
        and row.sent_score == score
        and (row.sent_activity_progress, row.sent_grading_progress) == (activity, grading)
    ):
        return row
    body = {
        "userId": lti_user.sub,
        "scoreGiven": score,
        "scoreMaximum": link.score_maximum,
        "activityProgress": activity,
        "gradingProgress": grading,
        "timestamp": timezone.now().isoformat(),
    }
    row.attempts += 1
    row.updated_at = timezone.now()
    try:
        _connector(context=link.context).make_service_request(
            [SCORE_SCOPE],
            _scores_url(link.line_item_url),
            is_post=True,
            data=json.dumps(body),
            content_type="application/vnd.ims.lis.v1.score+json",
        )
    except PLATFORM_ERRORS as error:
        row.status = GradeSync.Status.FAILED
        row.last_error = str(error)[:4000]
        row.save()
        raise GradeSendFailed(row.last_error) from error
    row.status = GradeSync.Status.SENT
    row.sent_score = score
    row.sent_activity_progress, row.sent_grading_progress = activity, grading
    row.sent_at = row.updated_at
    row.last_error = ""
    row.save()
    return row


# Registered by lti.tasks under this name; published by name so no web path imports tasks.
GRADE_SEND_TASK = "lti.grade_send"


def grade_send_request(*, assignment_id: int, user_id: int) -> bool:
    """Queue a passback if the assignment has a line item; never blocks nor raises (a verdict
    or an answer is being stored when this runs)."""
    linked = (
        AssignmentLink.objects.filter(assignment_id=assignment_id)
        .exclude(line_item_url="")
        .exists()
    )
    if not linked:
        return False
    return task_publish(name=GRADE_SEND_TASK, args=(assignment_id, user_id))


def grade_sync_resend(*, grade_sync: GradeSync) -> bool:
    """Send a row's score again, identical or not (an instructor asked)."""
    GradeSync.objects.filter(pk=grade_sync.pk).update(status=GradeSync.Status.PENDING)
    return grade_send_request(assignment_id=grade_sync.assignment_id, user_id=grade_sync.user_id)


def grade_syncs_failed_retry() -> int:
    """Publish again every passback that ran out of retries (a platform down for longer than
    the task's backoff); how many were published."""
    published = 0
    for assignment_id, user_id in GradeSync.objects.filter(
        status=GradeSync.Status.FAILED
    ).values_list("assignment_id", "user_id"):
        published += grade_send_request(assignment_id=assignment_id, user_id=user_id)
    return published


# --- Names and roles --------------------------------------------------------------------------


@dataclass(frozen=True)
class RosterSynced:
    enrolled: int
    skipped: int


def roster_sync(*, course_context_id: int) -> RosterSynced:
    """Enrol the platform's active members of a context (names and roles service); members
    with a role this tool does not know are skipped, never guessed."""
    link = CourseContext.objects.select_related("context__deployment__registration", "course").get(
        pk=course_context_id
    )
    context = link.context
    try:
        members = fetch_member_data(context)
    except PLATFORM_ERRORS as error:
        link.roster_error = str(error)[:4000]
        link.save(update_fields=["roster_error"])
        raise
    enrolled = skipped = 0
    with transaction.atomic():
        context.update_memberships(members)
        registration = context.deployment.registration
        for member in members:
            role = course_role_for(member.get("roles", []))
            if role is None or member.get("status", "Active") != "Active":
                skipped += 1
                continue
            lti_user = LtiUser.objects.get(registration=registration, sub=member["user_id"])
            user = lti_user_link(lti_user=lti_user)
            membership_set(course=link.course, user=user, role=role)
            enrolled += 1
        link.roster_synced_at = timezone.now()
        link.roster_error = ""
        link.save(update_fields=["roster_synced_at", "roster_error"])
    return RosterSynced(enrolled=enrolled, skipped=skipped)


# --- The tool's keys --------------------------------------------------------------------------


@dataclass(frozen=True)
class KeysRotated:
    created: Key
    retired: int


def key_ensure() -> None:
    """The tool's first signing key, made on first need (its key set published, a login), so a
    fresh deployment's first launch cannot fail for want of one. Two first requests at once may
    each make one: both are published and the newest signs, which is what a rotation leaves."""
    if not Key.objects.active().exists():
        Key.objects.generate()


def key_rotate(*, retire_after: timedelta) -> KeysRotated:
    """A new signing key, published at once beside the previous one; a key is retired only once
    its successor has been published for `retire_after`, so platforms that cache the key set
    never meet a signature they cannot check."""
    now = timezone.now()
    with transaction.atomic():
        created = Key.objects.generate()
        active = list(Key.objects.active().order_by("-datetime_created", "-pk"))
        retired = 0
        for newer, older in itertools.pairwise(active):
            if newer.pk != created.pk and newer.datetime_created <= now - retire_after:
                Key.objects.filter(pk=older.pk).update(is_active=False)
                retired += 1
    return KeysRotated(created=created, retired=retired)
