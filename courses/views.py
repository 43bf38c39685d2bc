"""The course pages: a student's course and assignment pages, and the staff pages of a course
(gradebook and its CSV, members and enrolment, extensions, overrides, statistics, similarity).

Thin: each view checks the user's role in this course (being staff of the site is not enough),
activates the course's time zone (times are shown and typed in it), then calls selectors and
services. A course is a 404 to whoever is not in it; a staff page is a 403 to its students."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from courses import selectors, services
from courses.forms import EnrolForm, ExtensionForm, OverrideForm
from courses.models import Assignment, Course, Extension, Membership, ScoreOverride
from grader.engine.misconceptions import misconception_describe

MSG_EXTENSION_GRANTED = "Extension given to {names}."
MSG_EXTENSION_REVOKED = "Extension of {name} removed."
MSG_OVERRIDE_SET = "Score of {name} overridden."
MSG_OVERRIDE_REMOVED = "Override of {name} removed: the policy's score counts again."
MSG_ENROLLED = "{added} added, {already} already in the course."
MSG_ENROL_UNKNOWN = "No single account matches: {names}."
MSG_JOINED = "You joined {title}."
MSG_INVITE_RESET = "A new invitation link is ready; the old one no longer works."
MSG_SIMILARITY_QUESTION = "Similarity reports compare code: this assignment is a question."
GRADEBOOK_FILENAME = "gradebook-{slug}-{date}.csv"

View = Callable[..., HttpResponse]


def _course_for(request: HttpRequest, slug: str) -> Course:
    """The course, if the user belongs to it; else 404 (a course's existence is its own)."""
    course = get_object_or_404(Course, slug=slug)
    if not selectors.courses_for(user=request.user).filter(pk=course.pk).exists():
        raise Http404
    return course


def course_view(*, staff: bool = False, instructor: bool = False) -> Callable[[View], View]:
    """Signed in, a member of the course (404 otherwise), its staff (or instructor) where
    asked (403 otherwise); the view runs in the course's time zone and gets the course."""

    def decorate(view: View) -> View:
        @login_required
        @wraps(view)
        def wrapped(request: HttpRequest, slug: str, **kwargs: Any) -> HttpResponse:
            course = _course_for(request, slug)
            if instructor and not selectors.course_is_instructor(course=course, user=request.user):
                raise PermissionDenied
            if staff and not selectors.course_is_staff(course=course, user=request.user):
                raise PermissionDenied
            with timezone.override(course.zone):
                return view(request, course, **kwargs)

        return wrapped

    return decorate


def _assignment(course: Course, pk: int) -> Assignment:
    return get_object_or_404(
        Assignment.objects.select_related("course", "exercise", "question"), course=course, pk=pk
    )


def _student(course: Course, user_id: int) -> Any:
    membership = get_object_or_404(
        Membership, course=course, user_id=user_id, role=Membership.Role.STUDENT
    )
    return membership.user


# --- Every member ------------------------------------------------------------------------------


@login_required
@require_GET
def course_list(request: HttpRequest) -> HttpResponse:
    courses = selectors.courses_for(user=request.user)
    staffed = set(selectors.courses_staffed_by(user=request.user).values_list("pk", flat=True))
    return render(request, "courses/course_list.html", {"courses": courses, "staffed": staffed})


@login_required
@require_http_methods(["GET", "POST"])
def course_join(request: HttpRequest, token: str) -> HttpResponse:
    """The invitation link: a page that asks, then a POST that joins (a link followed by a
    preview bot must not enrol anyone)."""
    if request.method == "POST":
        try:
            membership = services.course_join(token=token, user=request.user)
        except services.EnrolmentRefused as refused:
            return render(request, "courses/join.html", {"error": refused.message}, status=404)
        messages.success(request, MSG_JOINED.format(title=membership.course.title))
        return redirect(membership.course)
    course = Course.objects.filter(invite_token=token, invite_enabled=True).first()
    if course is None:
        return render(
            request, "courses/join.html", {"error": services.MSG_INVITE_INVALID}, status=404
        )
    return render(request, "courses/join.html", {"course": course, "token": token})


@course_view()
@require_GET
def course_detail(request: HttpRequest, course: Course) -> HttpResponse:
    is_staff = selectors.course_is_staff(course=course, user=request.user)
    context: dict[str, Any] = {"course": course, "is_course_staff": is_staff}
    if is_staff:
        context["assignments"] = selectors.assignments_of(course=course)
        context["is_instructor"] = selectors.course_is_instructor(course=course, user=request.user)
    else:
        context["rows"] = selectors.student_assignments(course=course, user=request.user)
    return render(request, "courses/course_detail.html", context)


@course_view()
@require_GET
def assignment_detail(request: HttpRequest, course: Course, pk: int) -> HttpResponse:
    assignment = get_object_or_404(
        selectors.assignments_of(course=course, user=request.user), pk=pk
    )
    is_staff = selectors.course_is_staff(course=course, user=request.user)
    context: dict[str, Any] = {
        "course": course,
        "assignment": assignment,
        "is_course_staff": is_staff,
    }
    if is_staff:
        stats = selectors.assignment_stats(assignment=assignment)
        context["stats"] = stats
        context["misconception"] = (
            misconception_describe(stats.misconception) if stats.misconception else None
        )
        context["is_instructor"] = selectors.course_is_instructor(course=course, user=request.user)
    else:
        context["row"] = selectors.student_assignment(assignment=assignment, user=request.user)
    return render(request, "courses/assignment_detail.html", context)


# --- Course staff ------------------------------------------------------------------------------


@course_view(staff=True)
@require_GET
def gradebook(request: HttpRequest, course: Course) -> HttpResponse:
    return render(
        request,
        "courses/gradebook.html",
        {
            "course": course,
            "gradebook": selectors.gradebook_for(course=course),
            "is_instructor": selectors.course_is_instructor(course=course, user=request.user),
        },
    )


@course_view(staff=True)
@require_GET
def gradebook_csv(request: HttpRequest, course: Course) -> HttpResponse:
    body = selectors.gradebook_csv(gradebook=selectors.gradebook_for(course=course))
    response = HttpResponse(body, content_type="text/csv; charset=utf-8")
    name = GRADEBOOK_FILENAME.format(slug=course.slug, date=timezone.localdate().isoformat())
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@course_view(staff=True)
@require_GET
def submission_detail(request: HttpRequest, course: Course, pk: int, sid: int) -> HttpResponse:
    """A student's submission (or answer) to this assignment, for the course's staff."""
    assignment = _assignment(course, pk)
    if assignment.exercise_id is not None:
        work = selectors.course_submission_get(assignment=assignment, submission_id=sid)
    else:
        work = selectors.course_attempt_get(assignment=assignment, attempt_id=sid)
    if work is None:
        raise Http404
    return render(
        request,
        "courses/work_detail.html",
        {"course": course, "assignment": assignment, "work": work},
    )


@course_view(instructor=True)
@require_http_methods(["GET", "POST"])
def members(request: HttpRequest, course: Course) -> HttpResponse:
    form = EnrolForm(request.POST or None, request.FILES or None)
    if request.method == "POST":
        if request.POST.get("action") == "reset-invite":
            services.course_invite_reset(course=course)
            messages.success(request, MSG_INVITE_RESET)
            return redirect("courses:members", slug=course.slug)
        if form.is_valid():
            try:
                result = services.members_import_csv(
                    course=course, text=form.cleaned_data["text"], role=form.cleaned_data["role"]
                )
            except ValidationError as error:
                form.add_error(None, error)
            else:
                messages.success(
                    request,
                    MSG_ENROLLED.format(added=len(result.added), already=len(result.already)),
                )
                if result.unknown:
                    messages.warning(
                        request, MSG_ENROL_UNKNOWN.format(names=", ".join(result.unknown[:50]))
                    )
                return redirect("courses:members", slug=course.slug)
    invite_url = request.build_absolute_uri(
        reverse("courses:course-join", kwargs={"token": course.invite_token})
    )
    return render(
        request,
        "courses/members.html",
        {
            "course": course,
            "form": form,
            "memberships": course.memberships.select_related("user").order_by(
                "role", "user__username"
            ),
            "invite_url": invite_url,
        },
    )


@course_view(instructor=True)
@require_http_methods(["GET", "POST"])
def extensions(request: HttpRequest, course: Course, pk: int) -> HttpResponse:
    assignment = _assignment(course, pk)
    students = (
        get_user_model()
        .objects.filter(
            course_memberships__course=course, course_memberships__role=Membership.Role.STUDENT
        )
        .order_by("username")
    )
    initial = {}
    if request.GET.get("user", "").isdigit():
        initial["users"] = [int(request.GET["user"])]
    form = ExtensionForm(request.POST or None, students=students, initial=initial)
    if request.method == "POST" and form.is_valid():
        granted = services.extension_grant(
            assignment=assignment,
            users=form.cleaned_data["users"],
            due_at=form.cleaned_data["due_at"],
            extra_days=form.cleaned_data["extra_days"],
            note=form.cleaned_data["note"],
            granted_by=request.user,
        )
        names = ", ".join(e.user.get_username() for e in granted)
        messages.success(request, MSG_EXTENSION_GRANTED.format(names=names))
        return redirect("courses:extensions", slug=course.slug, pk=assignment.pk)
    rows = [
        (e, assignment.policy_for(e).due_at)
        for e in assignment.extensions.select_related("user", "granted_by").order_by(
            "user__username"
        )
    ]
    return render(
        request,
        "courses/extensions.html",
        {"course": course, "assignment": assignment, "form": form, "rows": rows},
    )


@course_view(instructor=True)
@require_POST
def extension_revoke(request: HttpRequest, course: Course, pk: int, eid: int) -> HttpResponse:
    extension = get_object_or_404(Extension, pk=eid, assignment__course=course, assignment_id=pk)
    name = extension.user.get_username()
    services.extension_revoke(extension=extension)
    messages.success(request, MSG_EXTENSION_REVOKED.format(name=name))
    return redirect("courses:extensions", slug=course.slug, pk=pk)


@course_view(instructor=True)
@require_http_methods(["GET", "POST"])
def override(request: HttpRequest, course: Course, pk: int, user_id: int) -> HttpResponse:
    assignment = _assignment(course, pk)
    student = _student(course, user_id)
    existing = ScoreOverride.objects.filter(assignment=assignment, user=student).first()
    initial = {"score": existing.score, "comment": existing.comment} if existing else {}
    form = OverrideForm(request.POST or None, initial=initial)
    if request.method == "POST":
        if request.POST.get("action") == "remove":
            if existing is not None:
                services.score_override_remove(override=existing)
                messages.success(request, MSG_OVERRIDE_REMOVED.format(name=student.get_username()))
            return redirect("courses:gradebook", slug=course.slug)
        if form.is_valid():
            services.score_override_set(
                assignment=assignment,
                user=student,
                score=form.cleaned_data["score"],
                comment=form.cleaned_data["comment"],
                created_by=request.user,
            )
            messages.success(request, MSG_OVERRIDE_SET.format(name=student.get_username()))
            return redirect("courses:gradebook", slug=course.slug)
    return render(
        request,
        "courses/override.html",
        {
            "course": course,
            "assignment": assignment,
            "student": student,
            "form": form,
            "existing": existing,
            "policy_score": selectors.score_that_counts(
                assignment=assignment, user=student, with_override=False
            ),
        },
    )


@course_view(instructor=True)
@require_GET
def similarity(request: HttpRequest, course: Course, pk: int) -> HttpResponse:
    assignment = _assignment(course, pk)
    report = None
    if assignment.exercise_id is not None:
        report = selectors.similarity_report(assignment=assignment)
    return render(
        request,
        "courses/similarity.html",
        {
            "course": course,
            "assignment": assignment,
            "report": report,
            "question_message": MSG_SIMILARITY_QUESTION,
        },
    )
