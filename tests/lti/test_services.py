"""Grade passback, roster sync, key rotation and deep linking against the test platform, whose
token endpoint verifies the tool's signed client assertion against the tool's published keys."""

from __future__ import annotations

from datetime import timedelta

import pytest
import requests
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from lti_tool.models import Key, LtiUser

from courses.models import Membership
from grader.models import Submission
from lti import services
from lti.errors import GradeSendFailed
from lti.models import AssignmentLink, CourseContext, GradeSync
from lti.tasks import grade_send as grade_send_task
from tests.factories import assignment_create, exercise_get, submission_create
from tests.lti.conftest import launch_through, register
from tests.lti.platform import (
    DL,
    LTI,
    ROLE_INSTRUCTOR,
    ROLE_LEARNER,
    ROLE_TA,
    Platform,
)

pytestmark = pytest.mark.django_db(transaction=True)


def _linked_student(platform: Platform, registration, *, sub: str = "learner-1"):  # type: ignore[no-untyped-def]
    """A student launched into a link tied to an assignment of the launched course."""
    hint = platform.launch_prepare(sub=sub, roles=[ROLE_LEARNER])
    launch_through(Client(), platform, registration, hint)
    link_context = CourseContext.objects.get()
    assignment = assignment_create(course=link_context.course)
    AssignmentLink.objects.create(
        assignment=assignment,
        context=link_context.context,
        resource_link=link_context.context.resource_links.get(),
        line_item_url=platform.line_item_url("item-1"),
    )
    return assignment, LtiUser.objects.get(sub=sub).auth_user


def _passed(user, score: float = 1.0) -> Submission:  # type: ignore[no-untyped-def]
    return submission_create(
        user=user, exercise=exercise_get(), status=Submission.Status.PASSED, score=score
    )


@pytest.fixture
def registration(served_platform: Platform):  # type: ignore[no-untyped-def]
    return register(served_platform)


def test_the_score_that_counts_reaches_the_line_item_once(
    served_platform: Platform, registration
) -> None:
    assignment, user = _linked_student(served_platform, registration)
    _passed(user, 0.75)
    row = services.grade_send(assignment_id=assignment.pk, user_id=user.pk)
    assert row is not None and row.status == GradeSync.Status.SENT
    [score] = served_platform.scores
    assert score.line_item == "item-1"
    assert score.body["userId"] == "learner-1"
    assert score.body["scoreGiven"] == 75.0 and score.body["scoreMaximum"] == 100.0
    assert score.body["activityProgress"] == "Completed"
    assert score.body["gradingProgress"] == "FullyGraded"
    # Nothing changed: the identical score is not sent again.
    services.grade_send(assignment_id=assignment.pk, user_id=user.pk)
    assert len(served_platform.scores) == 1
    # A better verdict: sent.
    _passed(user, 1.0)
    services.grade_send(assignment_id=assignment.pk, user_id=user.pk)
    assert [s.body["scoreGiven"] for s in served_platform.scores] == [75.0, 100.0]


def test_a_refused_score_is_kept_with_the_platform_text_and_sent_again(
    served_platform: Platform, registration
) -> None:
    assignment, user = _linked_student(served_platform, registration)
    _passed(user)
    served_platform.score_failures.append((422, "gradebook column is locked"))
    with pytest.raises(GradeSendFailed, match="gradebook column is locked"):
        services.grade_send(assignment_id=assignment.pk, user_id=user.pk)
    row = GradeSync.objects.get()
    assert row.status == GradeSync.Status.FAILED
    assert "gradebook column is locked" in row.last_error
    assert served_platform.scores == []
    services.grade_send(assignment_id=assignment.pk, user_id=user.pk)
    row.refresh_from_db()
    assert row.status == GradeSync.Status.SENT and row.last_error == ""
    assert len(served_platform.scores) == 1


def test_the_task_retries_until_the_platform_accepts(
    served_platform: Platform, registration
) -> None:
    assignment, user = _linked_student(served_platform, registration)
    _passed(user)
    served_platform.score_failures.extend([(503, "down"), (502, "still down")])
    # apply() runs the task here, its retries too (at once, the backoff only counts on a worker).
    result = grade_send_task.apply(args=(assignment.pk, user.pk))
    assert result.successful()
    row = GradeSync.objects.get()
    assert row.status == GradeSync.Status.SENT and row.attempts == 3
    assert len(served_platform.scores) == 1


def test_the_task_gives_up_and_the_failure_stays_visible(
    served_platform: Platform, registration
) -> None:
    assignment, user = _linked_student(served_platform, registration)
    _passed(user)
    served_platform.score_failures.extend([(500, "broken gradebook")] * 10)
    result = grade_send_task.apply(args=(assignment.pk, user.pk))
    assert result.failed()
    row = GradeSync.objects.get()
    assert row.status == GradeSync.Status.FAILED
    assert row.attempts == grade_send_task.max_retries + 1
    assert "broken gradebook" in row.last_error


def test_the_admin_resends_a_failed_score(
    served_platform: Platform, registration, admin_client
) -> None:
    assignment, user = _linked_student(served_platform, registration)
    _passed(user)
    served_platform.score_failures.append((500, "temporarily broken"))
    with pytest.raises(GradeSendFailed):
        services.grade_send(assignment_id=assignment.pk, user_id=user.pk)
    page = admin_client.get("/admin/lti/gradesync/")
    assert "temporarily broken" in page.content.decode()


def test_a_token_request_signed_with_a_retired_key_is_refused(
    served_platform: Platform, registration
) -> None:
    assignment, user = _linked_student(served_platform, registration)
    _passed(user)
    # The key the tool signs with is no longer published: the platform must refuse.
    Key.objects.update(is_active=False)
    Key.objects.generate()
    signing = Key.objects.active().latest()
    Key.objects.filter(pk=signing.pk).update(is_active=False)
    registration.public_key, registration.private_key = signing.public_key, signing.private_key
    registration.save()
    with pytest.raises(GradeSendFailed, match="invalid_client"):
        services.grade_send(assignment_id=assignment.pk, user_id=user.pk)


def test_keys_rotate_with_both_published_and_signing_keeps_working(
    served_platform: Platform, registration, client
) -> None:
    assignment, user = _linked_student(served_platform, registration)
    first = Key.objects.active().get()
    call_command("lti_rotate_keys", "--retire-after-days", "7")
    second = Key.objects.active().latest()
    published = {k["kid"] for k in client.get("/lti/jwks/").json()["keys"]}
    assert published == {str(first), str(second)}
    # The new key signs at once; the platform finds it in the published set.
    _passed(user)
    services.grade_send(assignment_id=assignment.pk, user_id=user.pk)
    assert len(served_platform.scores) == 1
    # Once the second has been published for the whole period, the next rotation retires the
    # first; the previous one stays published next to the newest.
    Key.objects.filter(pk=first.pk).update(datetime_created=timezone.now() - timedelta(days=40))
    Key.objects.filter(pk=second.pk).update(datetime_created=timezone.now() - timedelta(days=8))
    call_command("lti_rotate_keys", "--retire-after-days", "7")
    third = Key.objects.active().latest()
    published = {k["kid"] for k in client.get("/lti/jwks/").json()["keys"]}
    assert published == {str(second), str(third)}


def test_the_roster_is_synchronised_from_names_and_roles(
    served_platform: Platform, registration
) -> None:
    hint = served_platform.launch_prepare(sub="teacher", roles=[ROLE_INSTRUCTOR])
    launch_through(Client(), served_platform, registration, hint)
    served_platform.members = [
        {"user_id": "m1", "roles": [ROLE_LEARNER], "status": "Active", "name": "M One"},
        {"user_id": "m2", "roles": [ROLE_TA], "status": "Active"},
        {"user_id": "m3", "roles": [LTI + "unknown#Role"], "status": "Active"},
        {"user_id": "m4", "roles": [ROLE_LEARNER], "status": "Inactive"},
    ]
    call_command("lti_sync_rosters")
    link = CourseContext.objects.get()
    roles = {
        m.user.lti_users.get().sub: m.role
        for m in Membership.objects.filter(course=link.course).select_related("user")
    }
    assert roles == {
        "teacher": Membership.Role.INSTRUCTOR,
        "m1": Membership.Role.STUDENT,
        "m2": Membership.Role.TEACHING_ASSISTANT,
    }
    assert link.roster_synced_at is not None
    # Again: nothing doubles.
    assert services.roster_sync(course_context_id=link.pk).enrolled == 2
    assert Membership.objects.count() == 3


def test_deep_linking_creates_the_assignment_and_answers_a_line_item(
    served_platform: Platform, registration
) -> None:
    client = Client()
    hint = served_platform.launch_prepare(sub="teacher", roles=[ROLE_INSTRUCTOR], deep_linking=True)
    response, _form = launch_through(client, served_platform, registration, hint)
    assert response.status_code == 302 and response["Location"].startswith("/lti/deep-link/")
    picker_url = response["Location"]
    # No cookie needed inside the frame: the signed token in the URL carries the launch.
    client = Client(enforce_csrf_checks=True)
    picker = client.get(picker_url)
    assert f"frame-ancestors {served_platform.url}" in picker["Content-Security-Policy"]
    exercise = exercise_get()
    answer = client.post(
        picker_url,
        {"target": f"exercise:{exercise.pk}", "title": "Week 1", "due_at": "2030-05-01T17:00"},
    )
    assert answer.status_code == 200
    assert f"form-action 'self' {served_platform.url}" in answer["Content-Security-Policy"]
    jwt_value = answer.context["jwt"]
    returned = requests.post(answer.context["return_url"], data={"JWT": jwt_value}, timeout=10)
    assert returned.status_code == 200, returned.text
    [item] = served_platform.deep_link_items
    assert item["type"] == "ltiResourceLink" and item["title"] == "Week 1"
    assert item["lineItem"]["scoreMaximum"] == 100.0
    assert item["submission"]["endDateTime"] == "2030-05-01T17:00:00Z"
    link = AssignmentLink.objects.get()
    assert link.assignment.exercise == exercise and link.resource_link is None
    assert item["custom"] == {"assignment_id": str(link.assignment.pk)}
    # The platform's first launch of the new link ties it to the assignment.
    hint = served_platform.launch_prepare(
        sub="student",
        roles=[ROLE_LEARNER],
        resource_link_id="dl-1",
        line_item="dl-item",
        custom=item["custom"],
    )
    launch_through(Client(), served_platform, registration, hint)
    link.refresh_from_db()
    assert link.resource_link.id_on_platform == "dl-1"
    assert link.line_item_url == served_platform.line_item_url("dl-item")
    # The same answer replayed to the platform is refused there (nonce spent).
    again = requests.post(answer.context["return_url"], data={"JWT": jwt_value}, timeout=10)
    assert again.status_code == 400 and "nonce" in again.text
    assert DL  # the claims' prefix, for readers of the platform's checks


def test_a_learner_cannot_deep_link(served_platform: Platform, registration) -> None:
    from lti import errors

    hint = served_platform.launch_prepare(sub="s", roles=[ROLE_LEARNER], deep_linking=True)
    response, _ = launch_through(Client(), served_platform, registration, hint)
    assert response.status_code == 403
    assert errors.MSG_DEEP_LINK_STAFF_ONLY in response.content.decode()
    assert not Membership.objects.exists()


def test_course_staff_see_a_failed_score_with_the_platform_text_and_resend_it(
    served_platform: Platform, registration
) -> None:
    from lti.views import MSG_RESENT

    assignment, user = _linked_student(served_platform, registration)
    _passed(user)
    served_platform.score_failures.append((422, "column closed by the registrar"))
    with pytest.raises(GradeSendFailed):
        services.grade_send(assignment_id=assignment.pk, user_id=user.pk)
    teacher = Client()
    hint = served_platform.launch_prepare(sub="teacher", roles=[ROLE_INSTRUCTOR])
    launch_through(teacher, served_platform, registration, hint)
    url = f"/lti/courses/{assignment.course.slug}/sync/"
    page = teacher.get(url)
    assert page.status_code == 200
    assert "column closed by the registrar" in page.content.decode()
    row = GradeSync.objects.get()
    done = teacher.post(url, {"resend": row.pk}, follow=True)
    assert MSG_RESENT in done.content.decode()
    row.refresh_from_db()
    assert row.status == GradeSync.Status.PENDING  # queued (no broker in this test)
    # A student of the course may not see it.
    assert Client().get(url).status_code == 302  # to the login page
    student = Client()
    student.force_login(user)
    assert student.get(url).status_code == 403
