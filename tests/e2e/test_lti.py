"""LTI 1.3 in the browser: a real (test) platform frames the tool, a launched student submits,
a real worker grades, and the platform's scores endpoint receives the score under the late
policy; an instructor deep-links an exercise; a forged launch is refused inside the frame and
leaves no user or enrolment behind."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from lti_tool.models import LtiContext, LtiResourceLink, LtiUser
from playwright.sync_api import Page, expect

from courses.models import Assignment, Membership
from courses.policy import lateness
from courses.services import course_create
from grader.models import Submission
from lti import errors
from lti.models import AssignmentLink, CourseContext
from tests.e2e.flows import ATTENTION_EXERCISE, VERDICT_TIMEOUT_MS, submit_code
from tests.factories import assignment_create
from tests.lti.conftest import register
from tests.lti.platform import ROLE_INSTRUCTOR, ROLE_LEARNER, Platform, _key
from tests.pipeline.stack import golden

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.stack,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

CORRECT = golden("correct_matmul")


def _scores_arrive(platform: Platform, count: int) -> None:
    deadline = time.monotonic() + VERDICT_TIMEOUT_MS / 1000
    while len(platform.scores) < count:
        assert time.monotonic() < deadline, f"no score at the platform; errors: {platform.errors}"
        time.sleep(0.2)


def test_a_launched_student_submits_and_the_platform_receives_the_late_score(
    worker_stack: None, live_server, platform: Platform, platform_tab: Callable[..., Page]
) -> None:
    registration = register(platform)
    deployment = registration.deployments.get()
    # The course and its assignment exist (an instructor tied it earlier): due a day ago,
    # 10 % off per day late.
    context = LtiContext.objects.create(
        deployment=deployment, id_on_platform=platform.context_id, title=platform.context_title
    )
    course = course_create(title=platform.context_title)
    CourseContext.objects.create(context=context, course=course)
    assignment = assignment_create(
        course=course,
        title="Attention, late",
        due_at=timezone.now() - timedelta(days=1, hours=1),
        late_policy=Assignment.LatePolicy.PENALTY,
        penalty_per_day=0.1,
        penalty_cap=0.5,
    )
    AssignmentLink.objects.create(
        assignment=assignment,
        context=context,
        resource_link=LtiResourceLink.objects.create(context=context, id_on_platform="link-1"),
    )

    hint = platform.launch_prepare(sub="learner-e2e", roles=[ROLE_LEARNER])
    tab = platform_tab(hint, registration)
    frame = tab.frame_locator("#tool")
    expect(frame.get_by_role("heading", name="Attention, late")).to_be_visible()
    with tab.context.expect_page() as opened:
        frame.get_by_role("link", name="Open the exercise in a new window").click()
    work = opened.value
    work.wait_for_load_state()
    # Signed in by the one-time link, in a window of its own (the tab's base URL is the
    # platform's, hence the tool's full address).
    assert work.url == f"{live_server.url}{ATTENTION_EXERCISE}"
    submit_code(work, CORRECT, exercise=work.url)
    verdict = work.locator("#result .verdict")
    expect(verdict).to_have_attribute("data-status", "passed", timeout=VERDICT_TIMEOUT_MS)

    _scores_arrive(platform, 1)
    [score] = platform.scores
    user = LtiUser.objects.get(sub="learner-e2e").auth_user
    assert Membership.objects.get(course=course, user=user).role == Membership.Role.STUDENT
    submission = Submission.objects.get(user=user)
    expected = lateness(policy=assignment.policy_for(None), submitted_at=submission.received_at)
    assert expected.penalty > 0
    assert score.line_item == "item-1"
    assert score.body["userId"] == "learner-e2e"
    assert score.body["scoreGiven"] == pytest.approx(100 * expected.apply(submission.score))
    assert score.body["scoreGiven"] < 100
    work.close()


def test_an_instructor_deep_links_an_exercise(
    platform: Platform, platform_tab: Callable[..., Page]
) -> None:
    registration = register(platform)
    hint = platform.launch_prepare(sub="teacher-e2e", roles=[ROLE_INSTRUCTOR], deep_linking=True)
    tab = platform_tab(hint, registration)
    frame = tab.frame_locator("#tool")
    expect(frame.get_by_role("heading", name="Add an assignment to your course")).to_be_visible()
    frame.get_by_label("Exercise or question").select_option(label="Scaled dot-product attention")
    frame.get_by_label("Title (optional)").fill("Week 2: attention")
    frame.get_by_label("Due (course time)").fill("2030-05-01T17:00")
    frame.get_by_role("button", name="Add to the course").click()
    expect(frame.get_by_role("heading", name="Added 1 item(s)")).to_be_visible()
    [item] = platform.deep_link_items
    assert item["lineItem"]["scoreMaximum"] == 100.0
    assert item["submission"]["endDateTime"] == "2030-05-01T17:00:00Z"
    assignment = Assignment.objects.get(title="Week 2: attention")
    assert assignment.exercise.slug == "scaled-dot-product-attention"
    assert item["custom"] == {"assignment_id": str(assignment.pk)}


def test_a_forged_launch_is_refused_in_the_frame_and_leaves_nothing(
    platform: Platform, platform_tab: Callable[..., Page]
) -> None:
    registration = register(platform)
    users_before = get_user_model().objects.count()
    forger, _jwk = _key()
    hint = platform.launch_prepare(sub="intruder", roles=[ROLE_INSTRUCTOR], sign_with=forger)
    tab = platform_tab(hint, registration)
    frame = tab.frame_locator("#tool")
    expect(frame.locator("#lti-refused")).to_have_text(errors.MSG_TOKEN_INVALID)
    assert get_user_model().objects.count() == users_before
    assert not Membership.objects.exists()
    assert not LtiUser.objects.exists()


def test_the_framed_pages_have_no_serious_accessibility_violation(
    page: Page, live_server, platform: Platform
) -> None:
    from django.test import Client

    from tests.e2e.test_accessibility import _scan
    from tests.lti.conftest import launch_through

    registration = register(platform)
    paths = []
    for deep_linking in (True, False):
        hint = platform.launch_prepare(
            sub="teacher-axe", roles=[ROLE_INSTRUCTOR], deep_linking=deep_linking
        )
        response, _form = launch_through(Client(), platform, registration, hint)
        assert response.status_code == 302
        paths.append(response["Location"])
    assignment_create(course=CourseContext.objects.get().course, title="Week 3")
    page.goto(live_server.url)
    found = _scan(page, [f"{live_server.url}{path}" for path in paths])
    assert not found, "serious accessibility violations:\n" + "\n".join(found)
