"""Writes. Keyword-only `<entity>_<action>` functions; views and the API stay thin."""

from __future__ import annotations

import secrets

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest

from questions import assessment
from questions.models import Attempt, CheckKind, FollowUp, Question, Status
from questions.selectors import Owner, attempts_for

# Long enough for a thorough interview answer, short enough that a paste of a whole paper
# (or an abuse of the regex matcher) is refused before any work is done.
ANSWER_MAX_CHARS = 4000
ANSWER_EMPTY = "Write an answer first: the model answer is revealed after you try."
ANSWER_TOO_LONG = (
    f"Answers are capped at {ANSWER_MAX_CHARS} characters. Shorten yours and submit again."
)
FOLLOW_UP_BEFORE_QUESTION = "Answer the main question first; its follow-ups come after the reveal."
FOLLOW_UP_WRONG_QUESTION = "That follow-up belongs to another question."
NO_OWNER = "Attempts need a user or an anonymous session."

# Session key under which an anonymous candidate's token lives. Django rotates the session
# key at login, but keeps the session data, so this token survives and lets the attempts be
# handed over to the account (see attempts_claim).
CANDIDATE_SESSION_KEY = "questions_candidate"


def answer_text_clean(text: str) -> str:
    """The answer as stored: trimmed, non-empty and capped. Raises ValidationError."""
    cleaned = (text or "").strip()
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
    return assessment.assess_text(text, question.key_point_specs(), question.wrong_answer_specs())


def follow_up_check(*, follow_up: FollowUp, text: str) -> dict[str, object]:
    kind = follow_up.check_kind
    if kind == CheckKind.NUMBER:
        result = assessment.check_number(
            text, float(follow_up.expected_number or 0.0), follow_up.tolerance
        )
        return result.as_dict()
    if kind == CheckKind.SHAPE:
        return assessment.check_shape(text, follow_up.expected_shape).as_dict()
    if kind == CheckKind.CHOICE:
        return assessment.check_choice(text, follow_up.choices, follow_up.correct_choice).as_dict()
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
) -> Attempt:
    """Assess and store an answer to a question or to one of its follow-ups."""
    if user is None and not session_key:
        raise ValidationError(NO_OWNER, code="no_owner")
    cleaned = answer_text_clean(text)
    if follow_up is not None:
        if follow_up.question_id != question.pk:
            raise ValidationError(FOLLOW_UP_WRONG_QUESTION, code="wrong_question")
        owner = Owner(user=user, session_key="" if user else session_key)
        if not attempts_for(owner).filter(question=question, follow_up__isnull=True).exists():
            raise ValidationError(FOLLOW_UP_BEFORE_QUESTION, code="follow_up_first")
        result = follow_up_check(follow_up=follow_up, text=cleaned)
    else:
        result = question_assess(question=question, text=cleaned).as_dict()
    return Attempt.objects.create(
        user=user,
        session_key="" if user else session_key,
        question=question,
        follow_up=follow_up,
        text=cleaned,
        assessment=result,
    )


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
