"""Instructors' pages around submissions (regrade, misconception analytics, grades out), and
the student's dismissal of a regrade notice. Thin: they call services and selectors."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from grader.forms import ID_MAX, RegradeApplyForm
from grader.models import Exercise, RegradePreview
from grader.selectors.grades import grades_csv
from grader.selectors.misconceptions import misconception_analytics
from grader.selectors.regrades import (
    regrade_details_for_user,
    regrade_final_submission_count,
    regrade_preview_current,
    regrade_preview_get,
    regrade_progress_latest,
)
from grader.services.regrades import (
    MSG_PREVIEW_USED,
    RegradeRefused,
    regrade_notice_dismiss,
    regrade_preview_request,
    submissions_regrade,
)
from grader.views.submissions import (
    MSG_BAD_QUERY,
    PERM_REGRADE,
    PERM_VIEW,
    POLL_INTERVAL,
    staff_permission_required,
)

MSG_REGRADE_APPLIED = "{n} submissions of {title} were queued for regrading."
GRADES_FILENAME = "grades-{date}.csv"


def _id_param(raw: str | None) -> int | None:
    """A row id from a form field, None if absent; ValueError if it is not one."""
    if raw in (None, ""):
        return None
    if not (raw.isascii() and raw.isdigit() and 0 < int(raw) <= ID_MAX):
        raise ValueError(raw)
    return int(raw)


def _regrade_context(exercise: Exercise) -> dict[str, object]:
    return {
        "exercise": exercise,
        "preview_state": regrade_preview_current(exercise=exercise),
        "progress": regrade_progress_latest(exercise=exercise),
        "poll_interval": POLL_INTERVAL,
    }


@staff_permission_required(PERM_VIEW)
@require_http_methods(["GET", "POST"])
def regrade(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = get_object_or_404(Exercise, slug=slug)
    if request.method == "POST":
        # A preview runs the sandbox on every submission; applying rewrites their scores.
        if not request.user.has_perm(PERM_REGRADE):
            raise PermissionDenied
        if request.POST.get("action") == "apply":
            try:
                preview_id = _id_param(request.POST.get("preview"))
            except ValueError:
                return HttpResponseBadRequest(MSG_BAD_QUERY)
            preview = (
                get_object_or_404(RegradePreview, pk=preview_id, exercise=exercise)
                if preview_id is not None
                else None
            )
            form = RegradeApplyForm(request.POST)
            if not form.is_valid():
                return HttpResponseBadRequest(MSG_BAD_QUERY)
            try:
                applied = submissions_regrade(
                    exercise=exercise,
                    user=request.user,
                    preview=preview,
                    notice_threshold=form.cleaned_data["notice_threshold"],
                )
            except RegradeRefused as refused:
                messages.error(request, refused.message)
            else:
                messages.success(
                    request, MSG_REGRADE_APPLIED.format(n=applied.total, title=exercise.title)
                )
        else:
            regrade_preview_request(exercise=exercise, user=request.user)
        return redirect(request.path)
    context = _regrade_context(exercise)
    if request.headers.get("HX-Request"):
        return render(request, "grader/_regrade_preview.html", context)
    return render(request, "grader/staff_regrade.html", context)


@staff_permission_required(PERM_VIEW, PERM_REGRADE)
@require_GET
def regrade_confirm(request: HttpRequest, slug: str) -> HttpResponse:
    """Say what applying will do, and ask again: the POST that applies is on this page."""
    exercise = get_object_or_404(Exercise, slug=slug)
    try:
        preview_id = _id_param(request.GET.get("preview"))
    except ValueError:
        return HttpResponseBadRequest(MSG_BAD_QUERY)
    state = (
        regrade_preview_get(exercise=exercise, preview_id=preview_id)
        if preview_id is not None
        else None
    )
    if preview_id is not None and (state is None or not state.can_apply):
        messages.error(request, MSG_PREVIEW_USED)
        return redirect("submissions:regrade", slug=exercise.slug)
    return render(
        request,
        "grader/staff_regrade_confirm.html",
        {
            "exercise": exercise,
            "preview": state.preview if state else None,
            "count": regrade_final_submission_count(exercise=exercise),
            "progress": regrade_progress_latest(exercise=exercise),
            "form": RegradeApplyForm(),
        },
    )


@staff_permission_required(PERM_VIEW)
@require_GET
def regrade_progress(request: HttpRequest, slug: str) -> HttpResponse:
    """The progress fragment the regrade page polls until every submission is graded."""
    exercise = get_object_or_404(Exercise, slug=slug)
    return render(request, "grader/_regrade_progress.html", _regrade_context(exercise))


@staff_permission_required(PERM_VIEW)
@require_GET
def misconceptions(request: HttpRequest) -> HttpResponse:
    return render(
        request, "grader/staff_misconceptions.html", {"exercises": misconception_analytics()}
    )


@staff_permission_required(PERM_VIEW)
@require_GET
def grades_download(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(grades_csv(), content_type="text/csv; charset=utf-8")
    filename = GRADES_FILENAME.format(date=timezone.localdate().isoformat())
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
@require_POST
def notice_dismiss(request: HttpRequest, pk: int) -> HttpResponse:
    if pk > ID_MAX:
        raise Http404("No such notice.")
    regrade_notice_dismiss(user=request.user, notice_id=pk)
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("grader:exercise-list")
    return redirect(target)


@login_required
@require_GET
def regrade_details(request: HttpRequest, pk: int) -> HttpResponse:
    """A student's attempts that a regrade changed, those it did not announce too."""
    details = regrade_details_for_user(user=request.user, regrade_id=pk) if pk <= ID_MAX else None
    if details is None:
        raise Http404("No such regrade.")
    return render(request, "grader/regrade_details.html", {"details": details})
