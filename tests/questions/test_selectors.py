"""Selectors that feed the assessment: the specs a question is assessed with, its example
answers included, and the cross-validation the Validate page shows."""

from __future__ import annotations

import pytest

from questions import assessment, assessment_eval, selectors, services
from questions.models import ExampleAnswer, Question

WINNER = "does-the-scale-change-the-winner"


@pytest.fixture
def winner(seed_content: None) -> Question:
    return Question.objects.get(slug=WINNER)


@pytest.mark.django_db
def test_the_specs_carry_the_questions_own_example_answers(winner: Question) -> None:
    specs = selectors.question_target_specs(question=winner)
    examples = specs[assessment_eval.QUESTION_TARGET].examples
    rows = ExampleAnswer.objects.filter(question=winner, follow_up__isnull=True)
    assert len(examples) == rows.count() >= 20
    first = rows.first()
    assert first is not None and first.as_spec() in examples


@pytest.mark.django_db
def test_the_web_path_reads_a_question_without_patterns_by_meaning(winner: Question) -> None:
    result = services.question_assess(
        question=winner,
        text="Dividing keeps the order, so the same key wins; the other keys keep a real share.",
    )
    assert "order-kept" in result.key_points
    assert {e.via for e in result.evidence if e.slug in result.key_points} == {
        assessment.VIA_MEANING
    }


@pytest.mark.django_db
def test_cross_validation_of_a_question_on_its_example_answers(winner: Question) -> None:
    result = selectors.question_cross_validation(question=winner)
    assert isinstance(result, assessment_eval.CrossValidation)
    assert result.n == winner.example_answers.filter(follow_up__isnull=True).count()
    assert result.folds == assessment_eval.CROSS_VALIDATION_FOLDS
    assert 0.55 <= result.key_point_f1 <= 1.0 and 0.7 <= result.wrong_answer_accuracy <= 1.0
    assert set(result.as_dict()) == {
        "n",
        "folds",
        "key_point_f1",
        "wrong_answer_accuracy",
        "false_rebuttals",
    }


@pytest.mark.django_db
def test_cross_validation_without_example_answers(winner: Question) -> None:
    winner.example_answers.all().delete()
    result = selectors.question_cross_validation(question=winner)
    assert (result.n, result.folds) == (0, 0)
