"""Browser views of submissions: thin, they call services and selectors."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from grader.models import Exercise, Submission
from grader.selectors.submissions import (
    misconception_counts,
    regrade_preview_latest,
    submission_checks_visible,
    submission_diagnosis,
    submission_diff,
    submission_get_for_user,
    submissions_of_user,
)
from grader.services.submissions import (
    SubmissionRejected,
    regrade_preview_request,
    submission_create,
    submissions_regrade,
)

POLL_INTERVAL = "700ms"
MSG_REGRADE_APPLIED = "{n} submissions of {title} were queued for regrading."


def _result_context(request: HttpRequest, submission: Submission) -> dict[str, object]:
    return {
        "submission": submission,
        "checks": submission_checks_visible(submission=submission, viewer=request.user),
        "diagnosis": submission_diagnosis(submission=submission) if submission.is_final else [],
        "plots": submission.plots or None,
        "poll_interval": POLL_INTERVAL,
    }


@login_required
@require_POST
def submit(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = get_object_or_404(Exercise, slug=slug, is_published=True)
    try:
        submission = submission_create(
            user=request.user, exercise=exercise, code=request.POST.get("code", "")
        )
    except SubmissionRejected as rejected:
        if request.headers.get("HX-Request"):
            return render(
                request,
                "grader/_submission_rejected.html",
                {"message": rejected.message},
                status=200,  # htmx swaps only 2xx by default; the message is the content
            )
        messages.error(request, rejected.message)
        return redirect(exercise.get_absolute_url())
    if request.headers.get("HX-Request"):
        return render(
            request, "grader/_submission_result.html", _result_context(request, submission)
        )
    return redirect("submissions:detail", pk=submission.pk)


def _render_own(request: HttpRequest, pk: int, template: str) -> HttpResponse:
    # Another student's submission does not exist for this user: 404, not 403.
    submission = submission_get_for_user(user=request.user, submission_id=pk)
    if submission is None:
        raise Http404("No such submission.")
    return render(request, template, _result_context(request, submission))


@login_required
@require_GET
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _render_own(request, pk, "grader/submission_detail.html")


@login_required
@require_GET
def status(request: HttpRequest, pk: int) -> HttpResponse:
    """The result fragment the page polls until the verdict is final."""
    return _render_own(request, pk, "grader/_submission_result.html")


@login_required
@require_GET
def history(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = get_object_or_404(Exercise, slug=slug)
    submissions = submissions_of_user(user=request.user, exercise=exercise)
    diff = None
    older = newer = None
    a, b = request.GET.get("a"), request.GET.get("b")
    if a and b and a.isdigit() and b.isdigit():
        pair = {s.pk: s for s in submissions.filter(pk__in=(int(a), int(b)))}
        older, newer = pair.get(int(a)), pair.get(int(b))
        if older is None or newer is None:
            raise Http404("No such submissions.")
        diff = submission_diff(older=older, newer=newer)
    page = Paginator(submissions, 25).get_page(request.GET.get("page"))
    return render(
        request,
        "grader/submission_history.html",
        {"exercise": exercise, "page": page, "diff": diff, "older": older, "newer": newer},
    )


@staff_member_required
@require_GET
def staff_list(request: HttpRequest) -> HttpResponse:
    qs = Submission.objects.select_related("exercise", "user")
    filters = {
        "exercise": request.GET.get("exercise", ""),
        "status": request.GET.get("status", ""),
        "user": request.GET.get("user", ""),
        "misconception": request.GET.get("misconception", ""),
    }
    if filters["exercise"]:
        qs = qs.filter(exercise__slug=filters["exercise"])
    if filters["status"]:
        qs = qs.filter(status=filters["status"])
    if filters["user"]:
        qs = qs.filter(user__username__icontains=filters["user"])
    if filters["misconception"]:
        qs = qs.filter(diagnosis__icontains=f'"{filters["misconception"]}"')
    page = Paginator(qs, 50).get_page(request.GET.get("page"))
    return render(
        request,
        "grader/staff_submissions.html",
        {
            "page": page,
            "filters": filters,
            "exercises": Exercise.objects.all(),
            "statuses": Submission.Status.choices,
        },
    )


@staff_member_required
@require_http_methods(["GET", "POST"])
def regrade(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = get_object_or_404(Exercise, slug=slug)
    if request.method == "POST":
        if request.POST.get("action") == "apply":
            n = submissions_regrade(exercise=exercise)
            messages.success(request, MSG_REGRADE_APPLIED.format(n=n, title=exercise.title))
        else:
            regrade_preview_request(exercise=exercise, user=request.user)
        return redirect(request.path)
    context = {
        "exercise": exercise,
        "preview": regrade_preview_latest(exercise=exercise),
        "poll_interval": POLL_INTERVAL,
    }
    if request.headers.get("HX-Request"):
        return render(request, "grader/_regrade_preview.html", context)
    return render(request, "grader/staff_regrade.html", context)


@staff_member_required
@require_GET
def misconceptions(request: HttpRequest) -> HttpResponse:
    return render(request, "grader/staff_misconceptions.html", {"rows": misconception_counts()})
