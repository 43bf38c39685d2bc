"""Browser views of submissions: thin, they call services and selectors."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from grader.forms import HistoryForm, StaffFilterForm, SubmitForm
from grader.models import Exercise, Submission
from grader.selectors.exercises import exercise_get_published
from grader.selectors.misconceptions import misconception_choices
from grader.selectors.submissions import (
    submission_checks_visible,
    submission_diagnosis,
    submission_diff,
    submission_error,
    submission_get_for_user,
    submission_history_rows,
    submission_queue_ahead,
    submission_queue_estimate_seconds,
    submission_queue_text,
    submission_queue_waited_seconds,
    submissions_of_user,
)
from grader.services.submitting import SubmissionRejected, submission_create

POLL_INTERVAL = "700ms"
# A submission that is next in line is usually graded within milliseconds: the panel the
# submit answers with asks first after this, so the verdict shows about as it is stored rather
# than at the steady poll most of a second later. One early poll only (each copy of the panel
# takes focus, which a screen reader reads out), and none behind others (a waiting queue's
# panels would add load when the web is busiest).
POLL_FIRST = "150ms"
MSG_BAD_QUERY = "Bad request: a parameter of this page is not valid."
MSG_BAD_CODE = "Your code could not be read (it holds a character that is not allowed)."

# Staff pages: being staff lets one into them; each needs the model permission for what it
# shows or does (as the admin requires), so a staff account without rights reads nothing.
PERM_VIEW = "grader.view_submission"
PERM_REGRADE = "grader.regrade_submission"


def staff_permission_required(
    *perms: str,
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @staff_member_required
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.has_perms(perms):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapped

    return decorate


def _result_context(
    request: HttpRequest, submission: Submission, *, just_submitted: bool = False
) -> dict[str, object]:
    checks = submission_checks_visible(submission=submission, viewer=request.user)
    # Where a queued submission stands, with an estimate ("" once it runs).
    ahead = submission_queue_ahead(submission=submission)
    estimate = (
        submission_queue_estimate_seconds(submission=submission, ahead=ahead) if ahead else None
    )
    return {
        "submission": submission,
        "checks": checks,
        "diagnosis": submission_diagnosis(submission=submission) if submission.is_final else [],
        "plots": submission.plots or None,
        "poll_interval": POLL_FIRST if just_submitted and not ahead else POLL_INTERVAL,
        # For the result fragment: where a queued submission stands (None once it runs).
        "queue_position": None if ahead is None else ahead + 1,
        "queue_text": submission_queue_text(
            ahead=ahead,
            estimate_seconds=estimate,
            waited_seconds=submission_queue_waited_seconds(submission=submission),
        ),
        # The exception, the student's frames and the line (for the editor).
        "error": submission_error(submission=submission, checks=checks),
    }


@login_required
@require_POST
def submit(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = get_object_or_404(Exercise, slug=slug, is_published=True)
    form = SubmitForm(request.POST)
    try:
        if not form.is_valid():
            raise SubmissionRejected(MSG_BAD_CODE)
        submission = submission_create(
            user=request.user, exercise=exercise, code=form.cleaned_data["code"]
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
        context = _result_context(request, submission, just_submitted=True)
        return render(request, "grader/_submission_result.html", context)
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
    exercise = exercise_get_published(slug=slug)
    submissions = submissions_of_user(user=request.user, exercise=exercise)
    query = HistoryForm(request.GET)
    if not query.is_valid():
        return HttpResponseBadRequest(MSG_BAD_QUERY)
    diff = None
    older = newer = None
    a, b = query.cleaned_data["a"], query.cleaned_data["b"]
    if a and b:
        pair = {s.pk: s for s in submissions.filter(pk__in=(a, b))}
        older, newer = pair.get(a), pair.get(b)
        if older is None or newer is None:
            raise Http404("No such submissions.")
        diff = submission_diff(older=older, newer=newer)
    page = Paginator(submissions, 25).get_page(query.cleaned_data["page"])
    return render(
        request,
        "grader/submission_history.html",
        {
            "exercise": exercise,
            "page": page,
            "rows": submission_history_rows(submissions=page.object_list),
            "diff": diff,
            "older": older,
            "newer": newer,
        },
    )


@staff_permission_required(PERM_VIEW)
@require_GET
def staff_list(request: HttpRequest) -> HttpResponse:
    qs = Submission.objects.select_related("exercise", "user")
    query = StaffFilterForm(request.GET)
    if not query.is_valid():
        return HttpResponseBadRequest(MSG_BAD_QUERY)
    filters = {
        name: query.cleaned_data[name] or ""
        for name in ("exercise", "status", "user", "misconception")
    }
    if filters["exercise"]:
        qs = qs.filter(exercise__slug=filters["exercise"])
    if filters["status"]:
        qs = qs.filter(status=filters["status"])
    if filters["user"]:
        qs = qs.filter(user__username__icontains=filters["user"])
    if filters["misconception"]:
        qs = qs.filter(diagnosis__icontains=f'"{filters["misconception"]}"')
    page = Paginator(qs, 50).get_page(query.cleaned_data["page"])
    return render(
        request,
        "grader/staff_submissions.html",
        {
            "page": page,
            "filters": filters,
            "exercises": Exercise.objects.all(),
            "statuses": Submission.Status.choices,
            "misconceptions": misconception_choices(),
        },
    )
