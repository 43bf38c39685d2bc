"""Reads. Views, the API, the admin preview and other apps call these, never the ORM directly."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Prefetch, QuerySet
from django.http import Http404
from django.urls import NoReverseMatch, reverse

from questions.models import Attempt, FollowUp, Page, Question, Role, Status, WrongAnswer
from questions.rendering import Segment, render_inline, render_markdown, render_segments

# The slug of the explainer page loaded from seed 000.
EXPLAINER_SLUG = "why-divide-by-sqrt-d"
# The question whose wrong answers the grader's misconception diagnoses point at.
MAIN_QUESTION_SLUG = "why-divide-before-softmax"


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


def attempt_history(owner: Owner, *, limit: int = 10) -> list[Attempt]:
    """The owner's latest answers to questions (not follow-ups), newest first."""
    return list(attempts_for(owner).filter(follow_up__isnull=True)[:limit])


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

    wrong_answer_url("scale-values")
    == "/questions/why-divide-before-softmax/#wrong-scale-values"
    The rebuttal itself only shows once the visitor has answered the question.
    """
    path = reverse("questions:detail", kwargs={"slug": question_slug})
    return f"{path}#wrong-{slug}"


def wrong_answer_links(*, question_slug: str = MAIN_QUESTION_SLUG) -> dict[str, str]:
    """Slug -> rebuttal URL for every wrong answer of a question (empty if it is unknown)."""
    slugs = WrongAnswer.objects.filter(question__slug=question_slug).values_list("slug", flat=True)
    return {slug: wrong_answer_url(slug, question_slug=question_slug) for slug in slugs}


@dataclass
class FollowUpView:
    follow_up: FollowUp
    prompt_html: str
    attempt: Attempt | None
    # Empty until the owner has answered this follow-up (or in a staff preview).
    expected_html: str = ""

    @property
    def revealed(self) -> bool:
        return bool(self.expected_html)


@dataclass
class WrongAnswerView:
    slug: str
    anchor: str
    statement_html: str
    rebuttal_html: str


@dataclass
class KeyPointView:
    slug: str
    label_html: str
    covered: bool


@dataclass
class QuestionPage:
    """Everything the question page may show to one owner. Answers, expected answers and
    rebuttals are only rendered into it once the owner has attempted; the template cannot
    leak what is not here."""

    question: Question
    prompt_html: str
    progress: QuestionProgress
    revealed: bool
    short_answer_html: str = ""
    full_answer: list[Segment] = field(default_factory=list)
    follow_ups: list[FollowUpView] = field(default_factory=list)
    wrong_answers: list[WrongAnswerView] = field(default_factory=list)
    key_points: list[KeyPointView] = field(default_factory=list)
    matched_wrong_answer: WrongAnswerView | None = None
    exercises: list[tuple[str, str]] = field(default_factory=list)


def question_page(*, question: Question, owner: Owner, preview: bool = False) -> QuestionPage:
    progress = question_progress(question=question, owner=owner)
    revealed = preview or progress.revealed
    page = QuestionPage(
        question=question,
        prompt_html=render_markdown(question.prompt),
        progress=progress,
        revealed=revealed,
    )
    if not revealed:
        return page
    page.short_answer_html = render_markdown(question.short_answer)
    page.full_answer = render_segments(question.full_answer)
    page.exercises = [(slug, exercise_url(slug)) for slug in question.exercise_slugs or []]
    page.wrong_answers = [
        WrongAnswerView(
            slug=wa.slug,
            anchor=wa.anchor,
            statement_html=render_inline(wa.statement),
            rebuttal_html=render_markdown(wa.rebuttal),
        )
        for wa in question.wrong_answers.all()
    ]
    for fu in question.follow_ups.all():
        attempt = progress.follow_up_attempts.get(fu.pk)
        page.follow_ups.append(
            FollowUpView(
                follow_up=fu,
                prompt_html=render_markdown(fu.prompt),
                attempt=attempt,
                expected_html=render_markdown(fu.expected_answer)
                if (attempt is not None or preview)
                else "",
            )
        )
    latest = progress.question_attempt
    covered = set(latest.assessment.get("key_points", [])) if latest else set()
    page.key_points = [
        KeyPointView(slug=kp.slug, label_html=render_inline(kp.label), covered=kp.slug in covered)
        for kp in question.key_points.all()
        if kp.follow_up_id is None
    ]
    matched = latest.assessment.get("wrong_answer") if latest else None
    page.matched_wrong_answer = next((w for w in page.wrong_answers if w.slug == matched), None)
    return page
