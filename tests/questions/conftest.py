from __future__ import annotations

import pytest

from questions.models import Question
from questions.selectors import MAIN_QUESTION_SLUG
from tests.factories import student_create


@pytest.fixture
def question(seed_content: None) -> Question:
    return Question.objects.get(slug=MAIN_QUESTION_SLUG)


@pytest.fixture
def alice(db: None):
    return student_create(username="alice", password="alice-pass-123")


@pytest.fixture
def bob(db: None):
    return student_create(username="bob", password="bob-pass-123")


GOOD_ANSWER = (
    "The variance of the dot product grows with d_k, so the softmax saturates and the "
    "gradients vanish. Dividing by sqrt(d_k) keeps the variance at 1."
)
