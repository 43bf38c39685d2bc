"""Reads. Views, the API, the admin preview and other apps call these, never the ORM directly."""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.contrib.sessions.backends.base import SessionBase
from django.core.cache import cache
from django.db import transaction
from django.db.models import Count, Max, Prefetch, Q, QuerySet
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.dispatch import receiver
from django.http import Http404
from django.urls import NoReverseMatch, reverse

from common.rendering import Segment, render_inline, render_markdown, render_segments
from questions import assessment, assessment_eval
from questions.models import (
    Attempt,
    CheckKind,
    FollowUp,
    KeyPoint,
    Page,
    Question,
    Role,
    Status,
    WrongAnswer,
)

# The slug of the explainer page loaded from seed 000.
EXPLAINER_SLUG = "why-divide-by-sqrt-d"
# The question whose wrong answers the grader's misconception diagnoses point at.
MAIN_QUESTION_SLUG = "why-divide-before-softmax"
# Session key of the unsaved drafts an instructor previews (see services.question_draft_save).
DRAFTS_SESSION_KEY = "questions_drafts"


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
    qs = (
        Question.objects.published()
        .prefetch_related("roles")
        .annotate(n_follow_ups=Count("follow_ups", distinct=True))
    )
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
    if not owner.is_known:  # a first visit: no query to build (it is most page views)
        return QuestionProgress()
    attempts = list(attempts_for(owner).filter(question=question))
    progress = QuestionProgress(history=[a for a in attempts if a.follow_up_id is None])
    for attempt in attempts:  # newest first, so the first seen is the latest
        if attempt.follow_up_id is None:
            progress.question_attempt = progress.question_attempt or attempt
        else:
            progress.follow_up_attempts.setdefault(attempt.follow_up_id, attempt)
    return progress


@dataclass(frozen=True)
class QuestionListProgress:
    """One owner's answers to one question, as the question list shows them."""

    answers: int
    follow_ups_answered: int
    last_answered: Any  # datetime of the latest answer or follow-up answer

    @property
    def answered(self) -> bool:
        return self.answers > 0


def question_list_progress(owner: Owner) -> dict[int, QuestionListProgress]:
    """question id -> what this owner answered (a user, or an anonymous session's token): one
    aggregate query for the whole list; empty for an owner we cannot identify."""
    rows = (
        attempts_for(owner)
        .order_by()
        .values("question_id")
        .annotate(
            answers=Count("id", filter=Q(follow_up__isnull=True)),
            follow_ups=Count("follow_up", distinct=True),
            last=Max("created"),
        )
    )
    return {
        row["question_id"]: QuestionListProgress(
            answers=row["answers"], follow_ups_answered=row["follow_ups"], last_answered=row["last"]
        )
        for row in rows
    }


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
    roles: list[Role] = field(default_factory=list)


@dataclass
class QuestionContent:
    """What a question page is built from: the saved rows, or an instructor's unsaved draft
    of them (model instances in memory, never saved)."""

    question: Question
    roles: list[Role]
    follow_ups: list[FollowUp]
    wrong_answers: list[WrongAnswer]
    key_points: list[KeyPoint]  # the question's own and its follow-ups'
    is_draft: bool = False

    def key_point_specs(self) -> list[assessment.KeyPointSpec]:
        return [kp.as_spec() for kp in self.key_points if kp.follow_up_id is None]

    def wrong_answer_specs(self) -> list[assessment.WrongAnswerSpec]:
        return [wa.as_spec() for wa in self.wrong_answers]


def question_content(*, question: Question) -> QuestionContent:
    return QuestionContent(
        question=question,
        roles=list(question.roles.all()),
        follow_ups=list(question.follow_ups.all()),
        wrong_answers=list(question.wrong_answers.all()),
        key_points=list(question.key_points.all()),
    )


# --- The published question's rows, kept per process (pages stay fast while grading) ---
# What every visitor of a published question sees is kept in each web process, so a page view
# makes no query. Each use checks it against a version in the shared cache (one round trip),
# which any save or delete of those rows replaces (the receiver below, connected at startup
# through questions.signals -> services -> selectors): an edit shows at once in every process,
# and the test suite's cache.clear() drops every kept copy too.
CONTENT_VERSION_KEY = "questions:content-version"
# A backstop should a version change be missed (the shared cache down during an edit).
CONTENT_MAX_AGE_SECONDS = 60.0
# After the shared cache fails, read from the database for this long rather than pay a
# connection timeout on every page.
CONTENT_CACHE_RETRY_SECONDS = 5.0
_CONTENT_MODELS = frozenset(
    {
        "questions.question",
        "questions.question_roles",
        "questions.role",
        "questions.followup",
        "questions.wronganswer",
        "questions.keypoint",
    }
)
log = logging.getLogger(__name__)
_content_lock = threading.Lock()
_content_kept: dict[str, tuple[str, float, QuestionContent]] = {}
_content_cache_down_until = 0.0


def _content_version() -> str | None:
    """The shared content version; None when the cache cannot say (nothing is kept then)."""
    global _content_cache_down_until
    if time.monotonic() < _content_cache_down_until:
        return None
    try:
        version = cache.get(CONTENT_VERSION_KEY)
        if version is None:
            cache.add(CONTENT_VERSION_KEY, secrets.token_hex(8), timeout=None)
            version = cache.get(CONTENT_VERSION_KEY)
    except Exception:
        log.warning("question pages not cached: the cache is unavailable", exc_info=True)
        _content_cache_down_until = time.monotonic() + CONTENT_CACHE_RETRY_SECONDS
        with _content_lock:
            _content_kept.clear()  # it may miss a change meanwhile
        return None
    return version


def question_content_forget() -> None:
    """Drop every kept question content, in this process and (new version) in all others."""
    with _content_lock:
        _content_kept.clear()
    try:
        cache.set(CONTENT_VERSION_KEY, secrets.token_hex(8), timeout=None)
    except Exception:
        log.warning("question pages may stay stale: the cache is unavailable", exc_info=True)


def question_published_content(*, slug: str) -> QuestionContent:
    """A published question's saved rows (Http404 if none), the same for every visitor and kept
    until they change. Shared between requests: read it, never modify it."""
    version = _content_version()
    now = time.monotonic()
    if version is not None:
        with _content_lock:
            kept = _content_kept.get(slug)
        if kept is not None and kept[0] == version and now - kept[1] < CONTENT_MAX_AGE_SECONDS:
            return kept[2]
    content = question_content(question=question_get(slug=slug))
    if version is not None:
        with _content_lock:
            _content_kept[slug] = (version, now, content)
    return content


@receiver([post_save, post_delete, m2m_changed], dispatch_uid="questions.content_changed")
def _content_changed(sender: Any, using: str = "default", **kwargs: Any) -> None:
    # Any sender (historical models of a data migration too); attempts are not content.
    if getattr(getattr(sender, "_meta", None), "label_lower", "") not in _CONTENT_MODELS:
        return
    if not kwargs.get("action", "post_").startswith("post_"):  # m2m_changed's pre_* calls
        return
    question_content_forget()
    # Again once committed: another process may have read the old rows meanwhile and kept
    # them under the new version.
    transaction.on_commit(question_content_forget, using=using)


def _sorted(rows: list[Any]) -> list[Any]:
    return sorted(rows, key=lambda row: (row.ordering, row.pk or 0))


def question_draft_form_data(
    *, session: SessionBase, question_id: int, token: str
) -> dict[str, list[str]] | None:
    """The change form as posted for a draft's preview (services.question_draft_save), to
    show it again with the edits; None for an unknown token or another question's."""
    stored = session.get(DRAFTS_SESSION_KEY, {}).get(token)
    if not stored or stored.get("question_id") != question_id:
        return None
    return stored.get("form_data")


def question_draft_get(
    *, session: SessionBase, question: Question, token: str
) -> QuestionContent | None:
    """An unsaved draft stored by services.question_draft_save, as unsaved model instances.

    None when the token is unknown or belongs to another question (a stale tab, another
    session): the caller falls back to the saved question.
    """
    stored = session.get(DRAFTS_SESSION_KEY, {}).get(token)
    if not stored or stored.get("question_id") != question.pk:
        return None
    data: Mapping[str, Any] = stored["content"]
    draft = Question(pk=question.pk, slug=question.slug, **data["fields"])
    roles = list(Role.objects.filter(pk__in=data.get("roles", [])))
    follow_ups = []
    for index, row in enumerate(data.get("follow_ups", [])):
        # New follow-ups get negative ids: unique anchors on the page, never a real row.
        pk = row.get("id") or -(index + 1)
        fields = {k: v for k, v in row.items() if k != "id"}
        follow_ups.append(FollowUp(pk=pk, question=draft, **fields))
    wrong_answers = [WrongAnswer(question=draft, **row) for row in data.get("wrong_answers", [])]
    key_points = [KeyPoint(question=draft, **row) for row in data.get("key_points", [])]
    return QuestionContent(
        question=draft,
        roles=roles,
        follow_ups=_sorted(follow_ups),
        wrong_answers=_sorted(wrong_answers),
        key_points=_sorted(key_points),
        is_draft=True,
    )


def question_page(
    *,
    question: Question,
    owner: Owner,
    preview: bool = False,
    content: QuestionContent | None = None,
) -> QuestionPage:
    content = content or question_content(question=question)
    question = content.question
    progress = (
        QuestionProgress()
        if content.is_draft
        else question_progress(question=question, owner=owner)
    )
    revealed = preview or progress.revealed
    page = QuestionPage(
        question=question,
        prompt_html=render_markdown(question.prompt),
        progress=progress,
        revealed=revealed,
        roles=content.roles,
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
        for wa in content.wrong_answers
    ]
    for fu in content.follow_ups:
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
        for kp in content.key_points
        if kp.follow_up_id is None
    ]
    matched = latest.assessment.get("wrong_answer") if latest else None
    page.matched_wrong_answer = next((w for w in page.wrong_answers if w.slug == matched), None)
    return page


@dataclass
class TrialKeyPoint:
    slug: str
    label_html: str
    covered: bool
    evidence: str  # the text that earned it, empty when missing


@dataclass
class PreviewTrial:
    """An instructor's trial answer on the preview, assessed and never stored."""

    text: str
    score: float
    key_points: list[TrialKeyPoint]
    wrong_answer: WrongAnswerView | None
    wrong_answer_evidence: str
    # Hits the assessor read as denied or refuted: why a rebuttal was *not* shown.
    denied: list[tuple[str, str]]
    # Everything it found, for answer_evidence.
    evidence: tuple[assessment.Evidence, ...] = ()
    wrong_answer_slug: str | None = None


def _evidence_text(item: assessment.Evidence) -> str:
    # The sentence when the assessor names one, else the text its pattern matched.
    return getattr(item, "sentence", "") or item.matched


def preview_trial(*, content: QuestionContent, page: QuestionPage, text: str) -> PreviewTrial:
    """Assess a trial answer against the content shown (saved or draft)."""
    # A draft edits the specs, not the labelled answers: the saved ones still teach it. Read
    # only here, so showing a page costs no query for them.
    examples = content.question.example_specs()
    result = assessment.assess_text(
        text, content.key_point_specs(), content.wrong_answer_specs(), examples
    )
    first: dict[str, str] = {}
    denied: list[tuple[str, str]] = []
    for item in result.evidence:
        if item.negated:
            denied.append((item.slug, _evidence_text(item)))
        else:
            first.setdefault(item.slug, _evidence_text(item))
    covered = set(result.key_points)
    return PreviewTrial(
        text=text,
        score=result.score,
        key_points=[
            TrialKeyPoint(
                slug=kp.slug,
                label_html=render_inline(kp.label),
                covered=kp.slug in covered,
                evidence=first.get(kp.slug, "") if kp.slug in covered else "",
            )
            for kp in content.key_points
            if kp.follow_up_id is None
        ],
        wrong_answer=next((w for w in page.wrong_answers if w.slug == result.wrong_answer), None),
        wrong_answer_evidence=first.get(result.wrong_answer or "", ""),
        denied=denied,
        evidence=tuple(result.evidence),
        wrong_answer_slug=result.wrong_answer,
    )


def question_target_specs(*, question: Question) -> dict[str, assessment_eval.TargetSpecs]:
    """What each free-text target of a question is assessed with, exactly as the web does:
    the question ("question") and each text follow-up ("follow-up:<ordering>"). Validate and
    `assess_eval` both read it, so they can never measure something candidates don't get."""
    specs = {
        assessment_eval.QUESTION_TARGET: assessment_eval.TargetSpecs(
            question.key_point_specs(), question.wrong_answer_specs(), question.example_specs()
        )
    }
    for follow_up in question.follow_ups.filter(check_kind=CheckKind.TEXT):
        target = f"{assessment_eval.FOLLOW_UP_PREFIX}{follow_up.ordering}"
        specs[target] = assessment_eval.TargetSpecs(follow_up.key_point_specs())
    return specs


def question_reads_by_meaning(*, question: Question) -> bool:
    """Does any key point or wrong answer of the question itself have no patterns, so that it
    is assessed from its sentence and the example answers? Only then does a cross-validated
    figure say more than Validate's own (patterns are used as they are)."""
    return (
        question.key_points.filter(follow_up__isnull=True, patterns__regex=r"^\s*$").exists()
        or question.wrong_answers.filter(patterns__regex=r"^\s*$").exists()
    )


def question_cross_validation(*, question: Question) -> assessment_eval.CrossValidation:
    """The question's own example answers, each assessed as if it were a candidate's by specs
    that learned from the other examples only (k folds): the Validate page's estimate of how
    the question will judge answers nobody has labelled. Patterns are used as they are."""
    return assessment_eval.cross_validate(
        question_target_specs(question=question)[assessment_eval.QUESTION_TARGET]
    )


def example_label_choices(
    *, question: Question
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The saved key points of the question itself and its wrong answers, as (slug, label)
    choices for labelling a trial answer ("none" first among the wrong answers)."""
    key_points = [(kp.slug, kp.slug) for kp in question.key_points.all() if kp.follow_up_id is None]
    wrong = [("", "none: the answer states no wrong answer")] + [
        (wa.slug, wa.slug) for wa in question.wrong_answers.all()
    ]
    return key_points, wrong
