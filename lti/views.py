"""LTI entry points: the OIDC login, the launch, the instructor's pick of an assignment, the
deep-linking picker, the key set, and the one-time link that opens a launched page in a new
window. Refusals are answered in one place (_refused) with their message and status.

Only these pages may be framed, and only by the registered platforms (frameable): every other
page keeps frame-ancestors 'none' and X-Frame-Options DENY."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import wraps
from typing import Any
from urllib.parse import urlsplit

from csp.constants import NONE
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST
from lti_tool.models import Key, LtiLaunch
from pylti1p3.contrib.django import DjangoOIDCLogin
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.exception import LtiException, OIDCException
from pylti1p3.lineitem import LineItem

from courses.models import Assignment, Course, Membership
from courses.selectors import course_is_staff
from grader.models import Exercise
from lti import services
from lti.errors import (
    MSG_DEEP_LINK_STAFF_ONLY,
    MSG_LAUNCH_INVALID,
    MSG_NO_ASSIGNMENT,
    MSG_NO_LAUNCH,
    MSG_PLATFORM_UNKNOWN,
    LtiRefused,
)
from lti.launch import LaunchDataStorage, StrictToolConfig, launch_restore, launch_validate
from lti.models import CourseContext, GradeSync
from lti.registration import MSG_REGISTRATION_INVALID, dynamic_registration_run
from lti.selectors import grade_syncs_of, platform_origins
from questions.models import Question

# Pages inside the platform's frame carry their launch in a signed token (see _Frame).
FRAME_SALT = "lti.frame"
FRAME_MAX_AGE_SECONDS = 60 * 60
# The one-time link to continue in a new window (browsers that block cookies in frames).
CONTINUE_SALT = "lti.continue"
CONTINUE_MAX_AGE_SECONDS = 5 * 60


def frameable(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Let the registered platforms, and only them, frame this view's pages (django-csp's
    per-response replacement, as its csp_replace decorator sets it)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        response._csp_replace = {"frame-ancestors": platform_origins() or [NONE]}  # type: ignore[attr-defined]
        response.xframe_options_exempt = True  # type: ignore[attr-defined]
        return response

    return wrapped


def _refused(request: HttpRequest, error: LtiRefused) -> HttpResponse:
    return render(request, "lti/refused.html", {"message": error.message}, status=error.status)


def jwks(request: HttpRequest) -> JsonResponse:
    services.key_ensure()
    return JsonResponse(Key.objects.as_jwks())


@csrf_exempt
@frameable
@require_http_methods(["GET", "POST"])
def oidc_login(request: HttpRequest, registration_uuid: str) -> HttpResponse:
    params = request.POST if request.method == "POST" else request.GET
    target = params.get("target_link_uri")
    if not target:
        return _refused(request, LtiRefused(MSG_LAUNCH_INVALID, status=400))
    services.key_ensure()  # the library reads the signing key while it finds the registration
    # No cookie-check page: the library's is an inline script, which the CSP refuses; a browser
    # that blocks the state cookie gets a refused launch that offers a new window instead.
    oidc = DjangoOIDCLogin(
        request, StrictToolConfig(registration_uuid), launch_data_storage=LaunchDataStorage()
    )
    try:
        return oidc.redirect(target)
    except (LtiException, OIDCException):  # the library's login errors share no base class
        return _refused(request, LtiRefused(MSG_PLATFORM_UNKNOWN))


def _continue_url(*, user_id: int, next_url: str) -> str:
    token = signing.dumps(
        {"u": user_id, "n": next_url, "t": timezone.now().timestamp()}, salt=CONTINUE_SALT
    )
    return reverse("lti:continue", kwargs={"token": token})


@dataclass(frozen=True)
class _Frame:
    """What a page inside the platform's frame knows of its launch, from the signed token in
    its URL: a browser that blocks third-party cookies sends the frame no session and no CSRF
    cookie, so the token is both (unguessable, bound to the launch, the user and the role)."""

    launch: LtiLaunch
    user_id: int
    course_id: int
    role: str


def _frame_token(*, launch: LtiLaunch, accepted: services.LaunchAccepted) -> str:
    return signing.dumps(
        {
            "l": launch.get_launch_id(),
            "u": accepted.user.pk,
            "c": accepted.course.pk,
            "r": str(accepted.role),
        },
        salt=FRAME_SALT,
    )


def _frame(request: HttpRequest, token: str, *, staff: bool = True) -> _Frame:
    try:
        data = signing.loads(token, salt=FRAME_SALT, max_age=FRAME_MAX_AGE_SECONDS)
    except signing.BadSignature as error:
        raise PermissionDenied(MSG_NO_LAUNCH) from error
    lti_launch = launch_restore(request=request, launch_id=data["l"])
    if lti_launch is None:
        raise PermissionDenied(MSG_NO_LAUNCH)
    if staff and data["r"] not in Membership.STAFF_ROLES:
        raise PermissionDenied(MSG_DEEP_LINK_STAFF_ONLY)
    return _Frame(launch=lti_launch, user_id=data["u"], course_id=data["c"], role=data["r"])


@csrf_exempt
@frameable
@require_POST
def launch(request: HttpRequest) -> HttpResponse:
    try:
        lti_launch = launch_validate(request=request)
        accepted = services.launch_accept(launch=lti_launch)
    except LtiRefused as error:
        return _refused(request, error)
    # Signed in for a launch in a window of its own; inside a frame the token below carries it.
    login(request, accepted.user, backend="django.contrib.auth.backends.ModelBackend")
    token = _frame_token(launch=lti_launch, accepted=accepted)
    if lti_launch.is_deep_link_launch:
        return redirect("lti:deep-link", token=token)
    staff = accepted.role in Membership.STAFF_ROLES
    if accepted.assignment is None and staff:
        return redirect("lti:pick", token=token)
    return _landing(
        request,
        user_id=accepted.user.pk,
        course=accepted.course,
        assignment=accepted.assignment,
        staff=staff,
    )


def _landing(
    request: HttpRequest,
    *,
    user_id: int,
    course: Course,
    assignment: Assignment | None,
    staff: bool,
) -> HttpResponse:
    context: dict[str, Any] = {
        "course": course,
        "assignment": assignment,
        "message": None if assignment else MSG_NO_ASSIGNMENT,
    }
    if assignment is not None:
        context["continue_url"] = _continue_url(user_id=user_id, next_url=assignment.target_url)
    if staff:
        context["sync_url"] = _continue_url(
            user_id=user_id, next_url=reverse("lti:course-sync", kwargs={"slug": course.slug})
        )
    return render(request, "lti/landing.html", context)


@csrf_exempt  # the signed token in the URL stands for the CSRF cookie a frame may not get
@frameable
@require_http_methods(["GET", "POST"])
def pick(request: HttpRequest, token: str) -> HttpResponse:
    """An instructor's launch of a link with no assignment yet: tie one of the course's."""
    frame = _frame(request, token)
    course = get_object_or_404(Course, pk=frame.course_id)
    choices = Assignment.objects.filter(course=course, lti_link__isnull=True)
    if request.method == "POST":
        assignment = get_object_or_404(choices, pk=request.POST.get("assignment"))
        services.assignment_link(assignment=assignment, launch=frame.launch)
        return _landing(
            request, user_id=frame.user_id, course=course, assignment=assignment, staff=True
        )
    sync_url = _continue_url(
        user_id=frame.user_id, next_url=reverse("lti:course-sync", kwargs={"slug": course.slug})
    )
    return render(
        request, "lti/pick.html", {"assignments": choices, "course": course, "sync_url": sync_url}
    )


MSG_RESENT = "The score is queued to be sent again."
MSG_ROSTER_SYNCED = "Roster synchronised: {enrolled} enrolled, {skipped} skipped."
MSG_ROSTER_FAILED = "The platform refused the roster: {error}"


@login_required
@require_http_methods(["GET", "POST"])
def course_sync(request: HttpRequest, slug: str) -> HttpResponse:
    """The course staff's view of what reached the platform: failed passbacks with the
    platform's own text, to send again, and the roster, to synchronise now."""
    course = get_object_or_404(Course, slug=slug)
    if not course_is_staff(course=course, user=request.user):
        raise PermissionDenied
    link = CourseContext.objects.filter(course=course).first()
    if request.method == "POST":
        if "resend" in request.POST:
            row = get_object_or_404(GradeSync, pk=request.POST["resend"], assignment__course=course)
            services.grade_sync_resend(grade_sync=row)
            messages.success(request, MSG_RESENT)
        elif "roster" in request.POST and link is not None:
            try:
                done = services.roster_sync(course_context_id=link.pk)
            except services.PLATFORM_ERRORS as error:  # the platform's own answer is shown
                messages.error(request, MSG_ROSTER_FAILED.format(error=error))
            else:
                messages.success(
                    request,
                    MSG_ROSTER_SYNCED.format(enrolled=done.enrolled, skipped=done.skipped),
                )
        return redirect("lti:course-sync", slug=course.slug)
    return render(
        request,
        "lti/course_sync.html",
        {"course": course, "link": link, "rows": grade_syncs_of(course_id=course.pk)},
    )


def _due_at(value: str, *, course_zone: Any) -> datetime | None:
    parsed = parse_datetime(value) if value else None
    if parsed is not None and timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, course_zone)
    return parsed


@csrf_exempt  # the signed token in the URL stands for the CSRF cookie a frame may not get
@frameable
@require_http_methods(["GET", "POST"])
def deep_link(request: HttpRequest, token: str) -> HttpResponse:
    """Deep linking: the instructor picks an exercise or a question and its due time; the
    platform gets one ltiResourceLink with its line item, and the tool the assignment."""
    lti_launch = _frame(request, token).launch
    if not lti_launch.is_deep_link_launch:
        raise PermissionDenied(MSG_NO_LAUNCH)
    exercises = Exercise.objects.order_by("title")
    questions = Question.objects.order_by("pk")
    context: dict[str, Any] = {"exercises": exercises, "questions": questions, "error": ""}
    if request.method == "GET":
        return render(request, "lti/deep_link.html", context)
    kind, _, pk = request.POST.get("target", "").partition(":")
    exercise = exercises.filter(pk=pk).first() if kind == "exercise" and pk.isdigit() else None
    question = questions.filter(pk=pk).first() if kind == "question" and pk.isdigit() else None
    if exercise is None and question is None:
        context["error"] = "Pick an exercise or a question."
        return render(request, "lti/deep_link.html", context, status=400)
    course = services.course_for_context(context=lti_launch.context)
    due_at = _due_at(request.POST.get("due_at", ""), course_zone=course.zone)
    title = request.POST.get("title", "").strip() or str(exercise or question)[:200]
    assignment = services.deep_link_assignment_create(
        launch=lti_launch, title=title, exercise=exercise, question=question, due_at=due_at
    )
    resource = _DeepLinkResourceWithSubmission(due_at)
    resource.set_url(request.build_absolute_uri(reverse("lti:launch"))).set_title(title)
    resource.set_custom_params({services.ASSIGNMENT_CUSTOM: str(assignment.pk)})
    resource.set_lineitem(
        LineItem()
        .set_score_maximum(services.SCORE_MAXIMUM)
        .set_label(title)
        .set_resource_id(str(assignment.pk))
    )
    message_launch = lti_launch.get_message_launch()
    deep = message_launch.get_deep_link()
    jwt_value = deep.get_response_jwt([resource])
    return_url = message_launch.get_launch_data()[
        "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
    ]["deep_link_return_url"]
    response = render(
        request, "lti/deep_link_return.html", {"return_url": return_url, "jwt": jwt_value}
    )
    # The answer is a form posted to the platform: allowed for this page alone.
    response._csp_update = {"form-action": [_origin_of(return_url)]}  # type: ignore[attr-defined]
    return response


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class _DeepLinkResourceWithSubmission(DeepLinkResource):
    """An ltiResourceLink that also says when submissions are due (the library omits it)."""

    def __init__(self, due_at: datetime | None) -> None:
        super().__init__()
        self._due_at = due_at

    def to_dict(self) -> dict[str, object]:
        item = super().to_dict()
        if self._due_at is not None:
            stamp = self._due_at.astimezone(UTC).isoformat().replace("+00:00", "Z")
            item["submission"] = {"endDateTime": stamp}
            line_item = item.get("lineItem")
            if isinstance(line_item, dict):
                line_item["endDateTime"] = stamp
        return item


MSG_REGISTERED = (
    "Registered. A tool administrator activates the registration and its deployment in the "
    "admin of this tool before the first launch."
)


@require_http_methods(["GET"])
def register(request: HttpRequest) -> HttpResponse:
    """Dynamic registration: the platform opens this, in its frame, with its configuration."""
    url = request.GET.get("openid_configuration", "")
    if not url.startswith(("https://", "http://")):
        return _refused(request, LtiRefused(MSG_REGISTRATION_INVALID, status=400))
    try:
        dynamic_registration_run(
            openid_configuration_url=url,
            registration_token=request.GET.get("registration_token", ""),
            base_url=request.build_absolute_uri("/"),
        )
    except LtiRefused as error:
        return _refused(request, error)
    response = render(request, "lti/registered.html", {"message": MSG_REGISTERED})
    # The platform frames this page before it is a registered (active) platform: its origin only.
    response._csp_replace = {"frame-ancestors": [_origin_of(url)]}  # type: ignore[attr-defined]
    response.xframe_options_exempt = True  # type: ignore[attr-defined]
    return response


@require_http_methods(["GET"])
def continue_in_window(request: HttpRequest, token: str) -> HttpResponse:
    """Sign the launched user in, first-party, in a new window; the link works once."""
    try:
        data = signing.loads(token, salt=CONTINUE_SALT, max_age=CONTINUE_MAX_AGE_SECONDS)
    except signing.BadSignature:
        return HttpResponseBadRequest(MSG_NO_LAUNCH)
    if not cache.add(f"lti-continue:{token[-40:]}", 1, CONTINUE_MAX_AGE_SECONDS):
        return HttpResponseBadRequest(MSG_NO_LAUNCH)
    user = get_object_or_404(get_user_model(), pk=data["u"])
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    next_url = str(data["n"])
    if not url_has_allowed_host_and_scheme(next_url, allowed_hosts=None):
        next_url = "/"
    return redirect(next_url)
