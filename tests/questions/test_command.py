"""`manage.py assess`: the web's assessment code, printed as one JSON line."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from questions import services
from questions.models import Question
from tests.questions.conftest import GOOD_ANSWER

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("assess", *args, stdout=out)
    return out.getvalue()


def test_json_line(question: Question) -> None:
    out = run(question.slug, "--text", GOOD_ANSWER, "--json")
    assert out.count("\n") <= 1
    data = json.loads(out)
    assert data == {
        "key_points": [
            "variance-grows",
            "softmax-saturates",
            "gradients-vanish",
            "scale-restores-unit-variance",
        ],
        "wrong_answer": None,
        "score": 1.0,
    }


def test_same_code_path_as_the_web(question: Question, alice) -> None:
    text = "Softmax saturates. A larger learning rate recovers the gradient."
    data = json.loads(run(question.slug, "--text", text, "--json"))
    attempt = services.attempt_create(question=question, user=alice, text=text)
    assert data == {k: attempt.assessment[k] for k in ("key_points", "wrong_answer", "score")}
    assert data["wrong_answer"] == "larger-learning-rate"


def test_negation(question: Question) -> None:
    data = json.loads(
        run(question.slug, "--text", "a larger learning rate can't recover it", "--json")
    )
    assert data["wrong_answer"] is None


def test_human_output(question: Question) -> None:
    out = run(question.slug, "--text", "softmax saturates")
    assert "covered  softmax-saturates" in out and "missing  variance-grows" in out


def test_errors(question: Question) -> None:
    with pytest.raises(CommandError, match="Unknown question slug: nope"):
        run("nope", "--text", "x")
    with pytest.raises(CommandError, match=services.ANSWER_EMPTY):
        run(question.slug, "--text", "  ")
