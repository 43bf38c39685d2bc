"""Exercise pages: the contract, the starter code and the submit panel (the lead's)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse

from grader.engine.misconceptions import QUESTION_PATH
from grader.selectors.exercises import (
    PROGRESS_LABELS,
    exercise_get_published,
    exercise_limits_text,
    exercise_list_with_progress,
    exercise_progress,
    exercise_statement_parts,
)
from grader.selectors.misconceptions import misconception_catalogue_with_rebuttals
from grader.selectors.submissions import submission_best_of_user, submissions_of_user
from questions.selectors import question_get


def _question_url(slug: str) -> str:
    """The question page this exercise demonstrates (a plain path if its URL is not routed)."""
    if not slug:
        return ""
    try:
        return reverse("questions:detail", kwargs={"slug": slug})
    except NoReverseMatch:
        return QUESTION_PATH.format(question=slug)


def _question_title(slug: str) -> str:
    """The linked question's title ("" if it is not published), so the lead names it truly."""
    if not slug:
        return ""
    try:
        return question_get(slug=slug).title
    except Http404:
        return ""


def exercise_list(request: HttpRequest) -> HttpResponse:
    show_progress = request.user.is_authenticated
    exercises = []
    for e in exercise_list_with_progress(user=request.user):
        progress = exercise_progress(exercise=e) if show_progress else ""
        exercises.append(
            {
                "exercise": e,
                "question_url": _question_url(e.question_slug),
                # The student's own progress (nothing for anonymous visitors).
                "progress": progress,
                "progress_label": PROGRESS_LABELS.get(progress, ""),
            }
        )
    return render(
        request,
        "grader/exercise_list.html",
        {"exercises": exercises, "show_progress": show_progress},
    )


def exercise_detail(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = exercise_get_published(slug=slug)
    context = {
        "exercise": exercise,
        "statement": exercise_statement_parts(exercise=exercise),
        "limits_text": exercise_limits_text(exercise=exercise),
        "question_url": _question_url(exercise.question_slug),
        "question_title": _question_title(exercise.question_slug),
        "editor_code": exercise.starter_code,
        "resumed": False,
        # The student's best graded submission (None for anonymous visitors).
        "best": submission_best_of_user(user=request.user, exercise=exercise),
    }
    if request.user.is_authenticated and not request.GET.get("fresh"):
        # A returning student continues from their latest submission, not the starter code.
        latest = submissions_of_user(user=request.user, exercise=exercise).first()
        if latest is not None:
            context.update(editor_code=latest.code, resumed=latest)
    return render(request, "grader/exercise_detail.html", context)


def misconception_list(request: HttpRequest) -> HttpResponse:
    """Every misconception the grader names, one section per stable anchor; open to anyone, so
    a student coming from a verdict reads it without answering the interview question first."""
    return render(
        request,
        "grader/misconception_list.html",
        {"misconceptions": misconception_catalogue_with_rebuttals()},
    )
