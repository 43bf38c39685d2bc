"""Models, services and selectors, against the seeded database."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from questions import selectors, services
from questions.models import Attempt, CheckKind, FollowUp, KeyPoint, Question, Status
from tests.questions.conftest import GOOD_ANSWER

pytestmark = pytest.mark.django_db


def test_attempt_create_assesses_and_stores(question: Question, alice) -> None:
    attempt = services.attempt_create(question=question, user=alice, text=f"  {GOOD_ANSWER}  ")
    assert attempt.text == GOOD_ANSWER  # trimmed
    assert attempt.assessment["score"] == 1.0
    assert attempt.assessment["wrong_answer"] is None
    assert set(attempt.assessment["key_points"]) == {
        "variance-grows",
        "softmax-saturates",
        "gradients-vanish",
        "scale-restores-unit-variance",
    }


def test_anonymous_attempt_uses_session_key(question: Question) -> None:
    attempt = services.attempt_create(
        question=question, session_key="tok", text="softmax saturates"
    )
    assert attempt.user is None and attempt.session_key == "tok"
    owner = selectors.Owner(session_key="tok")
    assert list(selectors.attempts_for(owner)) == [attempt]
    assert list(selectors.attempts_for(selectors.Owner(session_key="other"))) == []
    assert list(selectors.attempts_for(selectors.Owner())) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", services.ANSWER_EMPTY),
        ("   \n ", services.ANSWER_EMPTY),
        ("x" * (services.ANSWER_MAX_CHARS + 1), services.ANSWER_TOO_LONG),
    ],
)
def test_bad_answers_are_refused(question: Question, alice, text: str, message: str) -> None:
    with pytest.raises(ValidationError) as exc:
        services.attempt_create(question=question, user=alice, text=text)
    assert exc.value.messages == [message]
    assert not Attempt.objects.exists()


def test_attempt_needs_an_owner(question: Question) -> None:
    with pytest.raises(ValidationError) as exc:
        services.attempt_create(question=question, text="hi")
    assert exc.value.messages == [services.NO_OWNER]


def test_follow_up_needs_the_question_first(question: Question, alice) -> None:
    follow_up = question.follow_ups.get(check_kind=CheckKind.SHAPE)
    with pytest.raises(ValidationError) as exc:
        services.attempt_create(question=question, follow_up=follow_up, user=alice, text="(n, n)")
    assert exc.value.messages == [services.FOLLOW_UP_BEFORE_QUESTION]
    services.attempt_create(question=question, user=alice, text=GOOD_ANSWER)
    attempt = services.attempt_create(
        question=question, follow_up=follow_up, user=alice, text="( n , n )"
    )
    assert attempt.assessment["correct"] is True


def test_follow_up_of_another_question_is_refused(question: Question, alice) -> None:
    other = Question.objects.exclude(pk=question.pk).first().follow_ups.first()
    with pytest.raises(ValidationError) as exc:
        services.attempt_create(question=question, follow_up=other, user=alice, text="x")
    assert exc.value.messages == [services.FOLLOW_UP_WRONG_QUESTION]


@pytest.mark.parametrize(
    ("kind", "text", "correct"),
    [
        (CheckKind.NUMBER, "64", True),
        (CheckKind.NUMBER, "512", False),
        (CheckKind.SHAPE, "n x n", True),
        (CheckKind.TEXT, "the softmax saturates and gradients become tiny, no error", True),
        (CheckKind.TEXT, "it raises", False),
    ],
)
def test_follow_up_check_kinds(question: Question, kind: str, text: str, correct: bool) -> None:
    follow_up = question.follow_ups.filter(check_kind=kind).first()
    assert services.follow_up_check(follow_up=follow_up, text=text)["correct"] is correct


def test_choice_follow_up(seed_content: None) -> None:
    follow_up = FollowUp.objects.filter(check_kind=CheckKind.CHOICE).first()
    assert services.follow_up_check(follow_up=follow_up, text=follow_up.correct_choice)["correct"]


def test_question_progress_and_reveal(question: Question, alice) -> None:
    owner = selectors.Owner(user=alice)
    page = selectors.question_page(question=question, owner=owner)
    assert not page.revealed
    assert page.short_answer_html == "" and page.follow_ups == [] and page.wrong_answers == []
    services.attempt_create(
        question=question, user=alice, text="a larger learning rate recovers it"
    )
    page = selectors.question_page(question=question, owner=owner)
    assert page.revealed
    assert page.matched_wrong_answer is not None
    assert page.matched_wrong_answer.slug == "larger-learning-rate"
    assert all(not v.revealed for v in page.follow_ups)
    assert [w.slug for w in page.wrong_answers] == [
        "sums-to-one",
        "larger-learning-rate",
        "scale-values",
        "divide-by-dk",
        "sequence-length",
        "fp16-overflow",
        "scale-invariant",
    ]


def test_attempts_claim_moves_anonymous_attempts(question: Question, alice) -> None:
    services.attempt_create(question=question, session_key="tok", text="softmax saturates")
    assert services.attempts_claim(session_key="tok", user=alice) == 1
    assert Attempt.objects.get().user == alice
    assert services.attempts_claim(session_key="", user=alice) == 0


def test_publish_and_unpublish(question: Question) -> None:
    services.question_unpublish(question=question)
    assert question.slug not in {q.slug for q in selectors.question_list()}
    services.question_publish(question=question)
    assert Question.objects.get(pk=question.pk).status == Status.PUBLISHED
    assert question.slug in {q.slug for q in selectors.question_list()}


def test_question_list_filters(seed_content: None) -> None:
    by_role = selectors.question_list(role="ai-data-systems")
    assert [q.slug for q in by_role] == [
        "why-divide-before-softmax",
        "which-dimension-in-multi-head",
        "is-the-scale-ever-different",
        "why-scale-at-initialisation",
    ]
    assert all(q.level == "L1" for q in selectors.question_list(level="L1"))
    for level in ("L1", "L2", "L3"):
        assert len(selectors.question_list(level=level)) >= 2, level
    assert len(selectors.question_list()) == 10


def test_wrong_answer_url() -> None:
    assert (
        selectors.wrong_answer_url("scale-values")
        == "/questions/why-divide-before-softmax/#wrong-scale-values"
    )


def test_wrong_answer_links(seed_content: None) -> None:
    links = selectors.wrong_answer_links()
    assert links["divide-by-dk"] == "/questions/why-divide-before-softmax/#wrong-divide-by-dk"
    assert set(links) == {
        "sums-to-one",
        "larger-learning-rate",
        "scale-values",
        "divide-by-dk",
        "sequence-length",
        "fp16-overflow",
        "scale-invariant",
    }
    assert selectors.wrong_answer_links(question_slug="nope") == {}


def test_exercise_url_falls_back_to_a_plain_path() -> None:
    assert selectors.exercise_url("stable-softmax") == "/exercises/stable-softmax/"


def test_model_validation(question: Question) -> None:
    fu = FollowUp(question=question, prompt="p", expected_answer="e", check_kind=CheckKind.NUMBER)
    with pytest.raises(ValidationError, match="expected number"):
        fu.full_clean()
    fu = FollowUp(
        question=question,
        prompt="p",
        expected_answer="e",
        check_kind=CheckKind.CHOICE,
        choices=["a", "b"],
        correct_choice="c",
    )
    with pytest.raises(ValidationError, match="one of the options"):
        fu.full_clean()
    kp = KeyPoint(question=question, slug="new", label="l", patterns="([broken")
    with pytest.raises(ValidationError, match="regular expression"):
        kp.full_clean()


def test_stable_slugs(question: Question) -> None:
    assert set(question.wrong_answers.values_list("slug", flat=True)) == {
        "sums-to-one",
        "larger-learning-rate",
        "scale-values",
        "divide-by-dk",
        "sequence-length",
        "fp16-overflow",
        "scale-invariant",
    }
    assert set(
        question.key_points.filter(follow_up__isnull=True).values_list("slug", flat=True)
    ) == {"variance-grows", "softmax-saturates", "gradients-vanish", "scale-restores-unit-variance"}
    assert list(question.follow_ups.values_list("level", flat=True)) == ["L1", "L2", "L2", "L3"]
    assert set(question.roles.values_list("name", flat=True)) == {
        "Inference Engineering",
        "LLM Product Engineering",
        "AI Data Systems",
    }
