"""Launches from a real (test) platform: sign-in by the platform's subject id, enrolment with
the launch's role, the assignment tied to the link; and every forged or broken launch refused
with its message, leaving no user or membership behind."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from lti_tool.models import LtiUser

from courses.models import Course, Membership
from lti import errors
from lti.models import AssignmentLink, CourseContext
from tests.factories import assignment_create
from tests.lti.conftest import launch_through, register
from tests.lti.platform import LTI, ROLE_INSTRUCTOR, ROLE_LEARNER, ROLE_TA, Platform, _key

pytestmark = pytest.mark.django_db


def _counts() -> tuple[int, int, int]:
    return (
        get_user_model().objects.count(),
        Membership.objects.count(),
        LtiUser.objects.count(),
    )


def test_a_learner_launch_signs_in_enrols_and_opens_the_tied_assignment(
    platform: Platform, registration
) -> None:
    client = Client()
    hint = platform.launch_prepare(sub="learner-1", roles=[ROLE_LEARNER])
    # First launch: the course is created from the context; no assignment tied yet.
    response, _form = launch_through(client, platform, registration, hint)
    assert response.status_code == 200
    assert errors.MSG_NO_ASSIGNMENT in response.content.decode()
    course = Course.objects.get()
    assert course.title == platform.context_title
    assert CourseContext.objects.get().course == course
    user = LtiUser.objects.get(sub="learner-1").auth_user
    assert Membership.objects.get(course=course, user=user).role == Membership.Role.STUDENT
    assert not user.has_usable_password()

    assignment = assignment_create(course=course)
    AssignmentLink.objects.create(
        assignment=assignment,
        context=CourseContext.objects.get().context,
        resource_link=LtiUser.objects.get().contexts.get().resource_links.get(),
    )
    hint = platform.launch_prepare(sub="learner-1", roles=[ROLE_LEARNER])
    response, _form = launch_through(Client(), platform, registration, hint)
    assert response.status_code == 200
    page = response.content.decode()
    assert assignment.title in page
    # The work opens in a new window, signed in by a link that works once.
    continue_url = response.context["continue_url"]
    opened = Client().get(continue_url)
    assert opened.status_code == 302 and opened["Location"] == assignment.target_url
    assert Client().get(continue_url).status_code == 400
    # The same person again: the same user, the line item learnt from the launch.
    assert get_user_model().objects.filter(username__startswith="lti-").count() == 1
    assert AssignmentLink.objects.get().line_item_url == platform.line_item_url("item-1")
    # The launched page may be framed by the platform only.
    assert f"frame-ancestors {platform.url}" in response["Content-Security-Policy"]
    assert "X-Frame-Options" not in response


@pytest.mark.parametrize(
    ("roles", "expected"),
    [
        ([ROLE_INSTRUCTOR], Membership.Role.INSTRUCTOR),
        ([ROLE_TA, ROLE_INSTRUCTOR], Membership.Role.TEACHING_ASSISTANT),
        (["Learner"], Membership.Role.STUDENT),
    ],
)
def test_the_launch_role_becomes_the_course_role(
    platform: Platform, registration, roles, expected
) -> None:
    hint = platform.launch_prepare(sub="person", roles=roles)
    response, _form = launch_through(Client(), platform, registration, hint)
    assert response.status_code in (200, 302)
    assert Membership.objects.get().role == expected


def test_an_instructor_launch_without_an_assignment_offers_to_pick_one(
    platform: Platform, registration
) -> None:
    hint = platform.launch_prepare(sub="teacher", roles=[ROLE_INSTRUCTOR])
    response, _form = launch_through(Client(), platform, registration, hint)
    assert response.status_code == 302 and response["Location"].startswith("/lti/pick/")
    pick_url = response["Location"]
    course = Course.objects.get()
    assignment = assignment_create(course=course, title="Week 1")
    # A browser that blocks cookies in the platform's frame: no session, no CSRF cookie; the
    # signed token in the URL is enough, and nothing else is.
    frame = Client(enforce_csrf_checks=True)
    page = frame.get(pick_url)
    assert "Week 1" in page.content.decode()
    assert f"frame-ancestors {platform.url}" in page["Content-Security-Policy"]
    assert frame.post(pick_url.replace("/pick/", "/pick/x"), {"assignment": 1}).status_code == 403
    done = frame.post(pick_url, {"assignment": assignment.pk})
    assert done.status_code == 200 and "Week 1" in done.content.decode()
    link = AssignmentLink.objects.get()
    assert link.assignment == assignment and link.resource_link.id_on_platform == "link-1"
    assert link.line_item_url == platform.line_item_url("item-1")


def test_a_learner_token_cannot_pick(platform: Platform, registration) -> None:
    from django.core import signing

    from lti.views import FRAME_SALT

    hint = platform.launch_prepare(sub="teacher", roles=[ROLE_INSTRUCTOR])
    response, _form = launch_through(Client(), platform, registration, hint)
    data = signing.loads(response["Location"].split("/")[3], salt=FRAME_SALT)
    learner = signing.dumps({**data, "r": Membership.Role.STUDENT.value}, salt=FRAME_SALT)
    assert Client().get(f"/lti/pick/{learner}/").status_code == 403


def test_the_user_is_found_by_issuer_and_subject_never_by_email(
    platform: Platform, registration
) -> None:
    from tests.factories import student_create

    existing = student_create(username="alice", email="same@platform.example")
    hint = platform.launch_prepare(
        sub="same", roles=[ROLE_LEARNER], tamper={"email": "same@platform.example"}
    )
    launch_through(Client(), platform, registration, hint)
    launched = LtiUser.objects.get(sub="same").auth_user
    assert launched != existing


def test_an_ordinary_page_still_refuses_every_frame(client: Client) -> None:
    response = client.get("/")
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    assert response["X-Frame-Options"] == "DENY"


# --- Refused launches: a message, a 4xx, and nothing written ----------------------------------


def _refused(response, message: str, before: tuple[int, int, int], status: int = 403) -> None:
    assert response.status_code == status
    assert message in response.content.decode()
    assert _counts() == before
    assert not CourseContext.objects.exists()


def test_an_unknown_issuer_is_refused(platform: Platform, registration) -> None:
    before = _counts()
    hint = platform.launch_prepare(
        sub="x", roles=[ROLE_LEARNER], tamper={"iss": "https://evil.example"}
    )
    response, _ = launch_through(Client(), platform, registration, hint)
    _refused(response, errors.MSG_PLATFORM_UNKNOWN, before)


def test_an_unknown_client_id_is_refused(platform: Platform, registration) -> None:
    before = _counts()
    hint = platform.launch_prepare(sub="x", roles=[ROLE_LEARNER], tamper={"aud": "another-client"})
    response, _ = launch_through(Client(), platform, registration, hint)
    _refused(response, errors.MSG_PLATFORM_UNKNOWN, before)


def test_a_wrong_audience_is_refused(platform: Platform, registration) -> None:
    before = _counts()
    hint = platform.launch_prepare(
        sub="x", roles=[ROLE_LEARNER], tamper={"aud": ["someone-else", platform.client_id]}
    )
    response, _ = launch_through(Client(), platform, registration, hint)
    _refused(response, errors.MSG_PLATFORM_UNKNOWN, before)


def test_a_bad_signature_is_refused(platform: Platform, registration) -> None:
    before = _counts()
    forger_key, _jwk = _key()
    hint = platform.launch_prepare(sub="x", roles=[ROLE_LEARNER], sign_with=forger_key)
    response, _ = launch_through(Client(), platform, registration, hint)
    _refused(response, errors.MSG_TOKEN_INVALID, before)


def test_an_expired_token_is_refused(platform: Platform, registration) -> None:
    before = _counts()
    past = int(time.time()) - 3600
    hint = platform.launch_prepare(
        sub="x", roles=[ROLE_LEARNER], tamper={"exp": past, "iat": past - 300}
    )
    response, _ = launch_through(Client(), platform, registration, hint)
    _refused(response, errors.MSG_TOKEN_INVALID, before)


def test_a_missing_nonce_is_refused(platform: Platform, registration) -> None:
    before = _counts()
    hint = platform.launch_prepare(sub="x", roles=[ROLE_LEARNER], tamper={"nonce": None})
    response, _ = launch_through(Client(), platform, registration, hint)
    _refused(response, errors.MSG_NONCE_INVALID, before)


def test_a_nonce_the_tool_never_issued_is_refused(platform: Platform, registration) -> None:
    before = _counts()
    hint = platform.launch_prepare(sub="x", roles=[ROLE_LEARNER], tamper={"nonce": "made-up"})
    response, _ = launch_through(Client(), platform, registration, hint)
    _refused(response, errors.MSG_NONCE_INVALID, before)


def test_a_replayed_launch_is_refused(platform: Platform, registration) -> None:
    client = Client()
    hint = platform.launch_prepare(sub="x", roles=[ROLE_LEARNER])
    first, form = launch_through(client, platform, registration, hint)
    assert first.status_code == 200
    before = _counts()
    again = client.post("/lti/launch/", form)
    assert again.status_code == 403
    assert errors.MSG_NONCE_INVALID in again.content.decode()
    assert _counts() == before


def test_a_launch_without_the_state_cookie_is_refused(platform: Platform, registration) -> None:
    before = _counts()
    hint = platform.launch_prepare(sub="x", roles=[ROLE_LEARNER])
    login_client = Client()
    from urllib.parse import parse_qsl, urlsplit

    login = login_client.get(f"/lti/login/{registration.uuid}/", platform.login_params(hint))
    _action, form = platform.authorize(dict(parse_qsl(urlsplit(login["Location"]).query)))
    # A forged post from elsewhere: the platform's token, but not this browser's state.
    response = Client().post("/lti/launch/", {**form, "state": "state-guessed"})
    _refused(response, errors.MSG_STATE_INVALID, before)


def test_an_unregistered_deployment_is_refused(platform: Platform, registration) -> None:
    from lti_tool.models import LtiDeployment

    before = _counts()
    hint = platform.launch_prepare(
        sub="x", roles=[ROLE_LEARNER], tamper={LTI + "deployment_id": "not-registered"}
    )
    response, _ = launch_through(Client(), platform, registration, hint)
    _refused(response, errors.MSG_DEPLOYMENT_UNKNOWN, before)
    assert LtiDeployment.objects.count() == 1  # the library would have added an inactive one


def test_an_inactive_deployment_is_refused(db: None, platform: Platform) -> None:
    registration = register(platform, deployment_active=False)
    before = _counts()
    hint = platform.launch_prepare(sub="x", roles=[ROLE_LEARNER])
    response, _ = launch_through(Client(), platform, registration, hint)
    _refused(response, errors.MSG_DEPLOYMENT_UNKNOWN, before)


def test_an_unknown_role_is_refused(platform: Platform, registration) -> None:
    before = _counts()
    hint = platform.launch_prepare(
        sub="x", roles=["http://purl.imsglobal.org/vocab/lis/v2/membership#Mentor"]
    )
    response, _ = launch_through(Client(), platform, registration, hint)
    _refused(response, errors.MSG_ROLE_UNKNOWN, before)


def test_a_login_for_an_unknown_registration_is_refused(platform: Platform, registration) -> None:
    import uuid

    hint = platform.launch_prepare(sub="x", roles=[ROLE_LEARNER])
    response = Client().get(f"/lti/login/{uuid.uuid4()}/", platform.login_params(hint))
    assert response.status_code == 403
    assert errors.MSG_PLATFORM_UNKNOWN in response.content.decode()
