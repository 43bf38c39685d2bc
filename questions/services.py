"""Writes. Keyword-only `<entity>_<action>` functions; views and the API stay thin."""

from __future__ import annotations

import functools
import hashlib
import logging
import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.sessions.backends.base import SessionBase
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest

from common.events import event_send_on_commit
from common.ratelimit import rate_limit_hit
from common.rendering import render_inline
from questions import assessment, assessment_eval, selectors
from questions.assessment.specs import via_of
from questions.events import answer_stored
from questions.evidence import VIA_LABELS, EvidenceItem, evidence_items
from questions.models import Attempt, CheckKind, ExampleAnswer, FollowUp, Question, Status
from questions.selectors import DRAFTS_SESSION_KEY, Owner, attempts_for

# Long enough for a thorough interview answer, short enough that a paste of a whole paper
# (or an abuse of the regex matcher) is refused before any work is done.
log = logging.getLogger(__name__)

ANSWER_MAX_CHARS = 4000
ANSWER_EMPTY = "Write an answer first: the model answer is revealed after you try."
# Said instead of cutting the text: a silently truncated answer would be assessed on words
# the candidate never learns were dropped. The counter on the page shows the same cap.
ANSWER_TOO_LONG = (
    f"Your answer is longer than the {ANSWER_MAX_CHARS}-character cap. Shorten it and submit "
    "again: nothing was cut or saved."
)
FOLLOW_UP_BEFORE_QUESTION = "Answer the main question first; its follow-ups come after the reveal."
FOLLOW_UP_WRONG_QUESTION = "That follow-up belongs to another question."
NO_OWNER = "Attempts need a user or an anonymous session."
ANSWER_THROTTLED = "Too many answers in a short time. Wait {wait} seconds and answer again."


class AnswerThrottled(Exception):
    """Over the answer limit (each answer runs the assessor); nothing was assessed or saved."""

    def __init__(self, wait: float) -> None:
        self.wait = int(wait)
        self.message = ANSWER_THROTTLED.format(wait=self.wait)
        super().__init__(self.message)


# Session key under which an anonymous candidate's token lives. Django rotates the session
# key at login, but keeps the session data, so this token survives and lets the attempts be
# handed over to the account (see attempts_claim).
CANDIDATE_SESSION_KEY = "questions_candidate"


def answer_text_clean(text: str) -> str:
    """The answer as stored: trimmed, non-empty and capped. Raises ValidationError.

    Browsers send a textarea's line breaks as CRLF; counted as one character each, as the
    page's counter counts them, so an answer the counter accepts is never refused.
    """
    cleaned = (text or "").replace("\r\n", "\n").strip()
    if not cleaned:
        raise ValidationError(ANSWER_EMPTY, code="empty")
    if len(cleaned) > ANSWER_MAX_CHARS:
        raise ValidationError(ANSWER_TOO_LONG, code="too_long")
    return cleaned


def owner_for_request(*, request: HttpRequest, create: bool) -> Owner:
    """The answering owner: the user, or a token in the anonymous session (made if create)."""
    if request.user.is_authenticated:
        return Owner(user=request.user)
    token = request.session.get(CANDIDATE_SESSION_KEY, "")
    if not token and create:
        token = secrets.token_urlsafe(24)
        request.session[CANDIDATE_SESSION_KEY] = token
    return Owner(session_key=token)


def question_assess(*, question: Question, text: str) -> assessment.TextAssessment:
    """The one assessment path shared by the web, the API and `manage.py assess`."""
    return assessment.assess_text(
        text, question.key_point_specs(), question.wrong_answer_specs(), question.example_specs()
    )


def follow_up_check(*, follow_up: FollowUp, text: str) -> dict[str, object]:
    kind = follow_up.check_kind
    known_wrong = follow_up.known_wrong if isinstance(follow_up.known_wrong, dict) else {}
    if kind == CheckKind.NUMBER:
        result = assessment.check_number(
            text, float(follow_up.expected_number or 0.0), follow_up.tolerance, known_wrong
        )
        return result.as_dict()
    if kind == CheckKind.SHAPE:
        return assessment.check_shape(text, follow_up.expected_shape, known_wrong).as_dict()
    if kind == CheckKind.CHOICE:
        return assessment.check_choice(
            text, follow_up.choices, follow_up.correct_choice, known_wrong
        ).as_dict()
    result, detail = assessment.check_text(text, follow_up.key_point_specs())
    return {**result.as_dict(), "key_points": detail.key_points, "missed": detail.missed}


@transaction.atomic
def attempt_create(
    *,
    question: Question,
    text: str,
    user: AbstractBaseUser | None = None,
    session_key: str = "",
    follow_up: FollowUp | None = None,
    client: str = "",
) -> Attempt:
    """Assess and store an answer to a question or to one of its follow-ups.

    Limited per user, or per client address for anonymous candidates (a new session is one
    dropped cookie away), whatever the path: the page's forms and the API both come here.
    """
    if user is None and not session_key:
        raise ValidationError(NO_OWNER, code="no_owner")
    cleaned = answer_text_clean(text)
    if user is not None:
        scope, ident = "answers", str(user.pk)
    else:
        scope, ident = "answers_anon", client or session_key
    wait = rate_limit_hit(scope=scope, ident=ident, rate=settings.THROTTLE_RATES.get(scope))
    if wait is not None:
        raise AnswerThrottled(wait)
    if follow_up is not None:
        if follow_up.question_id != question.pk:
            raise ValidationError(FOLLOW_UP_WRONG_QUESTION, code="wrong_question")
        owner = Owner(user=user, session_key="" if user else session_key)
        if not attempts_for(owner).filter(question=question, follow_up__isnull=True).exists():
            raise ValidationError(FOLLOW_UP_BEFORE_QUESTION, code="follow_up_first")
        result = follow_up_check(follow_up=follow_up, text=cleaned)
    else:
        result = question_assess(question=question, text=cleaned).as_dict()
    attempt = Attempt.objects.create(
        user=user,
        session_key="" if user else session_key,
        question=question,
        follow_up=follow_up,
        text=cleaned,
        assessment=result,
    )
    if user is not None and follow_up is None:
        ids = {"attempt_id": attempt.pk, "user_id": user.pk, "question_id": question.pk}
        event_send_on_commit(signal=answer_stored, sender=Attempt, **ids)
    return attempt


def attempts_claim(*, session_key: str, user: AbstractBaseUser) -> int:
    """Hand an anonymous candidate's attempts to the account they just logged in to."""
    if not session_key:
        return 0
    return Attempt.objects.filter(user__isnull=True, session_key=session_key).update(
        user=user, session_key=""
    )


def question_publish(*, question: Question) -> Question:
    question.status = Status.PUBLISHED
    question.save(update_fields=["status", "updated"])
    return question


def question_unpublish(*, question: Question) -> Question:
    question.status = Status.DRAFT
    question.save(update_fields=["status", "updated"])
    return question


# An instructor keeps a few preview tabs open at most; older drafts are dropped so the
# session row stays small.
DRAFTS_KEPT = 5


def question_draft_save(
    *,
    session: SessionBase,
    question: Question,
    content: dict[str, object],
    form_data: dict[str, list[str]] | None = None,
) -> str:
    """Keep an unsaved edit of a question in the session for the preview; returns its token.

    The question itself is untouched: a published question stays online, unchanged, while
    its instructor previews and tries answers on the edit (selectors.question_draft_get).
    `content` is plain JSON: {"fields": {...}, "roles": [...], "follow_ups": [...],
    "wrong_answers": [...], "key_points": [...]}. `form_data` is the change form as posted,
    so "Back to editing" shows the form with the edits (selectors.question_draft_form_data).
    """
    drafts = dict(session.get(DRAFTS_SESSION_KEY, {}))
    token = secrets.token_urlsafe(12)
    drafts[token] = {"question_id": question.pk, "content": content}
    if form_data is not None:
        drafts[token]["form_data"] = form_data
    session[DRAFTS_SESSION_KEY] = dict(list(drafts.items())[-DRAFTS_KEPT:])
    return token


# --- Validate: the assessor on the instructors' example answers -------------------------


@dataclass(frozen=True)
class ExampleVerdict:
    """One example answer: what the instructor expects beside what the assessor found."""

    example: ExampleAnswer
    expected_key_points: tuple[str, ...]
    got_key_points: tuple[str, ...]
    expected_wrong_answer: str
    got_wrong_answer: str
    evidence: tuple[EvidenceItem, ...]

    @property
    def counted(self) -> tuple[EvidenceItem, ...]:
        return tuple(e for e in self.evidence if not e.denied)

    @property
    def denied(self) -> tuple[EvidenceItem, ...]:
        return tuple(e for e in self.evidence if e.denied)

    @property
    def missed_key_points(self) -> tuple[str, ...]:
        return tuple(s for s in self.expected_key_points if s not in self.got_key_points)

    @property
    def extra_key_points(self) -> tuple[str, ...]:
        return tuple(s for s in self.got_key_points if s not in self.expected_key_points)

    @property
    def key_points_right(self) -> bool:
        return not self.missed_key_points and not self.extra_key_points

    @property
    def wrong_answer_right(self) -> bool:
        return self.expected_wrong_answer == self.got_wrong_answer

    @property
    def right(self) -> bool:
        return self.key_points_right and self.wrong_answer_right

    @property
    def false_rebuttal(self) -> bool:
        """A rebuttal shown for a mistake the answer did not make: the costliest error."""
        return bool(self.got_wrong_answer) and not self.wrong_answer_right


@dataclass(frozen=True)
class LineHits:
    """A rule of a key point or wrong answer and how many example answers it counted in."""

    rule: str
    via: str
    examples: int

    @property
    def via_label(self) -> str:
        return VIA_LABELS.get(self.via, "rule")


@dataclass(frozen=True)
class ScoreRow:
    """One key point's or wrong answer's scores from assessment_eval, with its label."""

    score: assessment_eval.Scores
    label: str
    # Every authored line (those that never counted too), then any other rule that did.
    lines: tuple[LineHits, ...] = ()

    @property
    def label_html(self) -> str:
        return render_inline(self.label)


@dataclass(frozen=True)
class QuestionValidation:
    question: Question
    verdicts: tuple[ExampleVerdict, ...]
    # Examples of a follow-up that is not free text: there is nothing to assess them with.
    skipped: tuple[ExampleAnswer, ...]
    report: assessment_eval.EvalReport
    key_point_scores: tuple[ScoreRow, ...]
    wrong_answer_scores: tuple[ScoreRow, ...]

    @property
    def right_count(self) -> int:
        return self.report.exact

    @property
    def misjudged_count(self) -> int:
        return len(self.report.misjudged)

    @property
    def wrong_answer_accuracy(self) -> float | None:
        report = self.report
        return report.wrong_answer_accuracy if report.wrong_answer_cases else None

    @property
    def false_rebuttals(self) -> int:
        return self.report.false_rebuttals


def _target(example: ExampleAnswer) -> str:
    if example.follow_up is None:
        return assessment_eval.QUESTION_TARGET
    return f"{assessment_eval.FOLLOW_UP_PREFIX}{example.follow_up.ordering}"


# Validate assesses every example answer of a question on each load (seconds for hundreds);
# the same question, examples and assessor give the same results, so they are remembered in
# the shared cache under a key made of all three.
VALIDATE_CACHE_SECONDS = 7 * 24 * 3600


@functools.cache
def _assessor_version() -> str:
    """The assessor's source and its embedding model's version: a deploy that changes how
    answers are read must never show results the previous code made."""
    digest = hashlib.sha256(version("wordllama").encode())
    for path in sorted(Path(assessment.__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _validate_cache_key(specs: object, cases: Sequence[assessment_eval.EvalCase]) -> str:
    inputs = repr((_assessor_version(), specs, [(c.target, c.text) for c in cases]))
    return "validate:" + hashlib.sha256(inputs.encode()).hexdigest()


def _validate_cache_get(key: str) -> list[assessment.TextAssessment] | None:
    try:
        return cache.get(key)
    except Exception:  # the cache is down: assess again rather than fail the page
        log.warning("Validate's results not read: the cache is unavailable", exc_info=True)
        return None


def _validate_cache_set(key: str, results: list[assessment.TextAssessment]) -> None:
    try:
        cache.set(key, results, timeout=VALIDATE_CACHE_SECONDS)
    except Exception:
        log.warning("Validate's results not kept: the cache is unavailable", exc_info=True)


def question_validate(*, question: Question) -> QuestionValidation:
    """The assessor on every example answer of a question, and its scores. Writes nothing.

    The scores come from assessment_eval.evaluate, the function `manage.py assess_eval` and
    the CI floor use, so the admin and the command never disagree on the same answers.
    """
    specs = selectors.question_target_specs(question=question)
    labels = {
        (assessment_eval.QUESTION_TARGET, kp.slug): kp.label
        for kp in question.key_points.filter(follow_up__isnull=True)
    }
    labels.update(
        {
            (assessment_eval.QUESTION_TARGET, wa.slug): wa.statement
            for wa in question.wrong_answers.all()
        }
    )
    for fu in question.follow_ups.prefetch_related("key_points"):
        target = f"{assessment_eval.FOLLOW_UP_PREFIX}{fu.ordering}"
        if target in specs:
            labels.update({(target, kp.slug): kp.label for kp in fu.key_points.all()})
    examples = list(question.example_answers.select_related("follow_up"))
    judged = [e for e in examples if _target(e) in specs]

    cases = [
        assessment_eval.EvalCase(
            text=e.text,
            target=_target(e),
            key_points=tuple(e.expected_key_points or ()),
            wrong_answer=e.expected_wrong_answer or None,
            id=str(e.pk),
        )
        for e in judged
    ]
    key = _validate_cache_key(specs, cases)
    remembered = _validate_cache_get(key)
    replay = iter(remembered) if remembered and len(remembered) == len(cases) else None
    results: list[assessment.TextAssessment] = []

    def recording(
        text: str,
        key_points: Sequence[assessment.KeyPointSpec],
        wrong_answers: Sequence[assessment.WrongAnswerSpec],
        examples: Sequence[assessment.ExampleSpec],
    ) -> assessment.TextAssessment:
        # evaluate() assesses each case once, in order; the table needs every result.
        if replay is not None:
            result = next(replay)
        else:
            result = assessment.assess_text(text, key_points, wrong_answers, examples)
        results.append(result)
        return result

    report = assessment_eval.evaluate(cases, specs, assess=recording)
    if replay is None:
        _validate_cache_set(key, results)
    verdicts = tuple(
        ExampleVerdict(
            example=example,
            expected_key_points=tuple(example.expected_key_points or ()),
            got_key_points=tuple(result.key_points),
            expected_wrong_answer=example.expected_wrong_answer or "",
            got_wrong_answer=result.wrong_answer or "",
            evidence=tuple(evidence_items(result.evidence)),
        )
        for example, result in zip(judged, results, strict=True)
    )
    # How many examples each rule counted in (once per example): a line that never counts
    # is dead weight, one that counts everywhere may be too broad.
    hits: Counter[tuple[str, str, str, str]] = Counter()
    for example, result in zip(judged, results, strict=True):
        hits.update(
            {
                (_target(example), e.slug, e.rule, e.via)
                for e in result.evidence
                if not e.negated and e.rule
            }
        )
    authored: dict[tuple[str, str], tuple[str, ...]] = {}
    for target, target_specs in specs.items():
        for kp in target_specs.key_points:
            authored[(target, kp.slug)] = kp.patterns
        for wa in target_specs.wrong_answers:
            authored[(target, wa.slug)] = wa.patterns

    def lines(target: str, slug: str) -> tuple[LineHits, ...]:
        own = authored.get((target, slug), ())
        found = [
            LineHits(line, via_of(line), hits.get((target, slug, line, via_of(line)), 0))
            for line in own
        ]
        found += [
            LineHits(rule, via, count)
            for (t, s, rule, via), count in hits.items()
            if t == target and s == slug and rule not in own
        ]
        return tuple(found)

    def rows(scores: list[assessment_eval.Scores]) -> tuple[ScoreRow, ...]:
        return tuple(
            ScoreRow(s, labels.get((s.target, s.slug), ""), lines(s.target, s.slug)) for s in scores
        )

    return QuestionValidation(
        question=question,
        verdicts=verdicts,
        skipped=tuple(e for e in examples if _target(e) not in specs),
        report=report,
        key_point_scores=rows(report.key_points),
        wrong_answer_scores=rows(report.wrong_answers),
    )


# --- A judgement marked wrong, kept as an example answer --------------------------------

JUDGEMENT_KEPT = (
    "Kept as an example answer with your labels: Validate now checks the assessor against it."
)
JUDGEMENT_CORRECTED = (
    "The example answer now has your labels: Validate checks the assessor against them."
)


@transaction.atomic
def example_answer_from_judgement(
    *,
    question: Question,
    text: str,
    key_points: Sequence[str],
    wrong_answer: str = "",
    follow_up: FollowUp | None = None,
    example: ExampleAnswer | None = None,
    note: str = "",
) -> ExampleAnswer:
    """An assessor's judgement an instructor marked wrong, kept with the right labels: a new
    example answer for a trial answer, or an existing example's labels corrected (on
    Validate the text is already an example)."""
    if example is None:
        example = ExampleAnswer(
            question=question,
            follow_up=follow_up,
            text=answer_text_clean(text),
            note=note,
            ordering=question.example_answers.count(),
        )
    example.expected_key_points = list(key_points)
    example.expected_wrong_answer = "" if example.follow_up_id else wrong_answer
    example.full_clean()
    example.save()
    return example
