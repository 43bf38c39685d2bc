"""Reads. Views, the API, the admin preview and other apps call these, never the ORM directly."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Prefetch, QuerySet
from django.http import Http404
from django.urls import NoReverseMatch, reverse

from questions.models import Attempt, FollowUp, Page, Question, Role, Status

# The slug of the explainer page loaded from seed 000.
EXPLAINER_SLUG = "why-divide-by-sqrt-d"
# The question whose wrong answers the grader's misconception diagnoses point at.
MAIN_QUESTION_SLUG = "why-divide-before-softmax"

User = AbstractBaseUser | AnonymousUser | None


@dataclass(frozen=True)
class Owner:
    """Who answers: a logged-in user, or an anonymous candidate's session token."""

    user: AbstractBaseUser | None = None
    session_key: str = ""

    @property
    def is_known(self) -> bool:
        return self.user is not None or bool(self.session_key)


def role_list() -> QuerySet[Role]:
    return Role.objects.all()


def question_list(*, role: str = "", level: str = "") -> QuerySet[Question]:
    """Published questions, optionally for one role slug and one level."""
    qs = Question.objects.published().prefetch_related("roles")
    if role:
        qs = qs.filter(roles__slug=role)
    if level:
        qs = qs.filter(level=level)
    return qs.distinct()


def question_get(*, slug: str, include_drafts: bool = False) -> Question:
    """The question or Http404 (a draft is invisible unless include_drafts)."""
    qs = Question.objects.prefetch_related(
        "roles",
        Prefetch("follow_ups", queryset=FollowUp.objects.order_by("ordering", "id")),
        "wrong_answers",
        "key_points",
    )
    if not include_drafts:
        qs = qs.filter(status=Status.PUBLISHED)
    try:
        return qs.get(slug=slug)
    except Question.DoesNotExist as exc:
        raise Http404("No such question.") from exc


def page_get(*, slug: str = EXPLAINER_SLUG, include_drafts: bool = False) -> Page:
    qs = Page.objects.all() if include_drafts else Page.objects.filter(status=Status.PUBLISHED)
    try:
        return qs.get(slug=slug)
    except Page.DoesNotExist as exc:
        raise Http404("No such page.") from exc


def attempts_for(owner: Owner) -> QuerySet[Attempt]:
    """Every attempt of one owner; empty for an owner we cannot identify."""
    qs = Attempt.objects.select_related("question", "follow_up")
    if owner.user is not None:
        return qs.filter(user=owner.user)
    if owner.session_key:
        return qs.filter(user__isnull=True, session_key=owner.session_key)
    return qs.none()


def attempt_get(*, owner: Owner, pk: int) -> Attempt:
    try:
        return attempts_for(owner).get(pk=pk)
    except Attempt.DoesNotExist as exc:
        raise Http404("No such attempt.") from exc


@dataclass
class QuestionProgress:
    """What one owner has done on one question: it decides what may be revealed."""

    question_attempt: Attempt | None = None
    follow_up_attempts: dict[int, Attempt] = field(default_factory=dict)
    history: list[Attempt] = field(default_factory=list)

    @property
    def revealed(self) -> bool:
        return self.question_attempt is not None


def question_progress(*, question: Question, owner: Owner) -> QuestionProgress:
    """The latest attempt on the question and on each follow-up, and the owner's history."""
    attempts = list(attempts_for(owner).filter(question=question))
    progress = QuestionProgress(history=[a for a in attempts if a.follow_up_id is None])
    for attempt in attempts:  # newest first, so the first seen is the latest
        if attempt.follow_up_id is None:
            progress.question_attempt = progress.question_attempt or attempt
        else:
            progress.follow_up_attempts.setdefault(attempt.follow_up_id, attempt)
    return progress


def answered_question_ids(owner: Owner) -> set[int]:
    return set(
        attempts_for(owner).filter(follow_up__isnull=True).values_list("question_id", flat=True)
    )


def exercise_url(slug: str) -> str:
    """The grader's exercise page; a plain path while the grader's URL is not there yet."""
    try:
        return reverse("grader:exercise-detail", kwargs={"slug": slug})
    except NoReverseMatch:
        return f"/exercises/{slug}/"


def wrong_answer_url(slug: str, *, question_slug: str = MAIN_QUESTION_SLUG) -> str:
    """The rebuttal anchor of a wrong answer on its question page, for misconception links.

    e.g. wrong_answer_url("scale-values") == "/questions/why-divide-before-softmax/#wrong-scale-values".
    The rebuttal itself only shows once the visitor has answered the question.
    """
    path = reverse("questions:detail", kwargs={"slug": question_slug})
    return f"{path}#wrong-{slug}"
