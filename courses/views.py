"""The course pages: a student's course page and assignment page, and the staff pages of a
course (gradebook, extensions, overrides, statistics, similarity, CSV). Thin: they check the
course role, then call selectors and services."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from courses import selectors, services
from courses.models import Assignment, Course


def _course_member(request: HttpRequest, slug: str) -> Course:
    """The course, if the user belongs to it; else 404 (a course's existence is its own)."""
    course = get_object_or_404(Course, slug=slug)
    if not selectors.courses_for(user=request.user).filter(pk=course.pk).exists():
        raise Http404
    return course


@login_required
@require_GET
def course_list(request: HttpRequest) -> HttpResponse:
    courses = selectors.courses_for(user=request.user)
    return render(request, "courses/course_list.html", {"courses": courses})


@login_required
@require_http_methods(["GET", "POST"])
def course_join(request: HttpRequest, token: str) -> HttpResponse:
    if request.method == "POST":
        try:
            membership = services.course_join(token=token, user=request.user)
        except services.EnrolmentRefused as refused:
            return render(request, "courses/join.html", {"error": refused.message}, status=404)
        return redirect(membership.course)
    return render(request, "courses/join.html", {"token": token})


@login_required
@require_GET
def course_detail(request: HttpRequest, slug: str) -> HttpResponse:
    course = _course_member(request, slug)
    return render(request, "courses/course_detail.html", {"course": course})


@login_required
@require_GET
def assignment_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    course = _course_member(request, slug)
    assignment = get_object_or_404(
        selectors.assignments_of(course=course, user=request.user), pk=pk
    )
    counting = selectors.score_that_counts(assignment=assignment, user=request.user)
    return render(
        request,
        "courses/assignment_detail.html",
        {"course": course, "assignment": assignment, "counting": counting},
    )


__all__ = ["Assignment"]
