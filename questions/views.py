"""Thin views: parse the request, call a selector or service, render or redirect."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from common.ratelimit import client_ip
from common.rendering import render_markdown, render_segments
from questions import evidence, selectors, services
from questions.forms import AnswerForm, FollowUpAnswerForm, QuestionFilterForm
from questions.models import FollowUp, Question

ANSWER_SAVED = "Your answer is saved and assessed. The model answer is below."
FOLLOW_UP_SAVED = "Follow-up checked. The expected answer is below."
DRAFT_GONE = (
    "That unsaved edit is no longer kept (drafts live in your session, the last few only): "
    "this is the saved question. Preview your changes again from the edit page."
)


@require_GET
def question_list(request: HttpRequest) -> HttpResponse:
    form = QuestionFilterForm(request.GET or None)
    role = level = ""
    if form.is_valid():
        role, level = form.cleaned_data["role"], form.cleaned_data["level"]
    owner = services.owner_for_request(request=request, create=False)
    questions = selectors.question_list(role=role, level=level)
    progress = selectors.question_list_progress(owner)  # what this candidate answered
    context = {
        "form": form,
        "questions": questions,
        "rows": [{"question": q, "progress": progress.get(q.pk)} for q in questions],
        "answered": {pk for pk, p in progress.items() if p.answered},
        "known_candidate": owner.is_known,
        "history": selectors.attempt_history(owner) if request.user.is_authenticated else [],
    }
    return render(request, "questions/question_list.html", context)


def _detail_response(
    request: HttpRequest,
    question: Question,
    *,
    answer_form: AnswerForm | None = None,
    bound_follow_up: FollowUpAnswerForm | None = None,
    preview: bool = False,
    content: selectors.QuestionContent | None = None,
    trial_text: str = "",
    draft_token: str = "",
    status: int = 200,
) -> HttpResponse:
    owner = services.owner_for_request(request=request, create=False)
    page = selectors.question_page(question=question, owner=owner, preview=preview, content=content)
    follow_ups = []
    for view in page.follow_ups:
        form = FollowUpAnswerForm(follow_up=view.follow_up)
        if bound_follow_up is not None and bound_follow_up.prefix == form.prefix:
            form = bound_follow_up
        follow_ups.append((view, form))
    trial = trial_evidence = None
    shown = content or selectors.question_content(question=question)
    if preview and trial_text:
        trial = selectors.preview_trial(content=shown, page=page, text=trial_text)
        trial_evidence = evidence.answer_evidence(
            key_points=[kp for kp in shown.key_points if kp.follow_up_id is None],
            covered=[kp.slug for kp in trial.key_points if kp.covered],
            wrong_answer=trial.wrong_answer_slug,
            evidence=trial.evidence,
        )
    latest = page.progress.question_attempt
    if answer_form is None:
        # "Answer again" starts from the last answer: improving it beats retyping it.
        answer_form = AnswerForm(initial={"text": latest.text} if latest and not preview else None)
    context = {
        "page": page,
        "question": page.question,
        "form": answer_form,
        "evidence": None if preview else evidence.attempt_evidence(page=page, content=shown),
        "trial_evidence": trial_evidence,
        "follow_ups": follow_ups,
        "preview": preview,
        "is_draft": bool(content and content.is_draft),
        "draft_token": draft_token,
        "trial": trial,
    }
    if trial is not None and not (content and content.is_draft):
        choices = selectors.example_label_choices(question=page.question)
        context.update(
            judgement_url=reverse("admin:questions_question_judgement", args=[question.pk]),
            key_point_choices=choices[0],
            wrong_answer_choices=choices[1],
            here=request.get_full_path(),
        )
    return render(request, "questions/question_detail.html", context, status=status)


@require_GET
def question_detail(request: HttpRequest, slug: str) -> HttpResponse:
    # The rows every visitor sees come from the per-process copy (no query while unchanged).
    content = selectors.question_published_content(slug=slug)
    return _detail_response(request, content.question, content=content)


def _attempt_store(
    request: HttpRequest,
    question: Question,
    form: forms.Form,
    *,
    form_context: str,
    follow_up: FollowUp | None = None,
) -> HttpResponse | None:
    """Assess and store a valid answer; the page again, with the message, if it is refused by
    the answer limit (the same limit the API applies)."""
    owner = services.owner_for_request(request=request, create=True)
    try:
        services.attempt_create(
            question=question,
            follow_up=follow_up,
            text=form.cleaned_data["text"],
            user=owner.user,
            session_key=owner.session_key,
            client=client_ip(request),
        )
    except services.AnswerThrottled as exc:
        form.add_error("text", exc.message)
        return _detail_response(request, question, status=429, **{form_context: form})
    return None


@require_POST
def question_answer(request: HttpRequest, slug: str) -> HttpResponse:
    question = selectors.question_get(slug=slug)
    form = AnswerForm(request.POST)
    if not form.is_valid():
        return _detail_response(request, question, answer_form=form, status=400)
    refused = _attempt_store(request, question, form, form_context="answer_form")
    if refused is not None:
        return refused
    messages.success(request, ANSWER_SAVED)
    return redirect(f"{question.get_absolute_url()}#assessment")


@require_POST
def follow_up_answer(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    question = selectors.question_get(slug=slug)
    follow_up = get_object_or_404(question.follow_ups.all(), pk=pk)
    form = FollowUpAnswerForm(request.POST, follow_up=follow_up)
    if not form.is_valid():
        return _detail_response(request, question, bound_follow_up=form, status=400)
    try:
        refused = _attempt_store(
            request, question, form, form_context="bound_follow_up", follow_up=follow_up
        )
    except ValidationError as exc:
        messages.error(request, exc.messages[0])
        return redirect(question.get_absolute_url())
    if refused is not None:
        return refused
    messages.success(request, FOLLOW_UP_SAVED)
    return redirect(f"{question.get_absolute_url()}#{follow_up.anchor}")


@staff_member_required
@require_http_methods(["GET", "POST"])
def question_preview(request: HttpRequest, slug: str) -> HttpResponse:
    """The page as a candidate sees it after answering: everything revealed, drafts too.

    `?draft=<token>` (or a posted `draft`) shows an unsaved edit kept by the admin's
    "Preview unsaved changes". A POSTed `text` is a trial answer: assessed against what the
    page shows, with its evidence, and never stored.
    """
    # An authoring tool: it stages edits and judges answers, so it needs the right to edit.
    if not request.user.has_perm("questions.change_question"):
        raise PermissionDenied
    question = selectors.question_get(slug=slug, include_drafts=True)
    token = request.POST.get("draft") or request.GET.get("draft") or ""
    content = None
    if token:
        content = selectors.question_draft_get(
            session=request.session, question=question, token=token
        )
        if content is None:
            messages.warning(request, DRAFT_GONE)
            token = ""
    if request.method == "GET":
        return _detail_response(request, question, preview=True, content=content, draft_token=token)
    form = AnswerForm(request.POST)
    if not form.is_valid():
        return _detail_response(
            request,
            question,
            answer_form=form,
            preview=True,
            content=content,
            draft_token=token,
            status=400,
        )
    return _detail_response(
        request,
        question,
        answer_form=form,
        preview=True,
        content=content,
        trial_text=form.cleaned_data["text"],
        draft_token=token,
    )


@require_GET
def explainer(request: HttpRequest) -> HttpResponse:
    page = selectors.page_get()
    context = {
        "page": page,
        "lead_html": render_markdown(page.lead),
        "segments": render_segments(page.body),
        "questions_url": reverse("questions:list"),
    }
    return render(request, "questions/explainer.html", context)
