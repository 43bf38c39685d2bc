"""The seed content (questions/content/*.md): slugs other tools rely on, every figure recomputed."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from questions.content_files import content_bundle
from questions.models import Page, Question, Status

BUNDLE = content_bundle()
Q002 = BUNDLE.question("scaled-dot-product-attention-by-hand")
Q003 = BUNDLE.question("why-divide-before-softmax")
Q004 = BUNDLE.question("why-divide-before-mixing")
EXPLAINER = BUNDLE.page("why-divide-by-sqrt-d")

Q = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 1, 0]], float)
K = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]], float)
V = np.array([[1, 0], [0, 1], [1, 1]], float)


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def row(values: np.ndarray, fmt: str) -> str:
    return "[" + " ".join(format(v, fmt) for v in values) + "]"


def test_worked_example_is_exact() -> None:
    text = Q002["full_answer"]
    scores = Q @ K.T
    scaled = scores / math.sqrt(4)
    weights = softmax(scaled)
    out = weights @ V
    for i in range(3):
        assert row(scores[i], ".0f") in text
        assert row(scaled[i], ".1f") in text
        assert row(weights[i], ".3f") in text
        assert row(out[i], ".3f") in text
    for i, name in enumerate(("Q", "K")):
        for r in (Q, K)[i]:
            assert row(r, ".0f") in text, name
    assert "5.367" in text and "[0.814, 0.494]" in text


def test_other_figures() -> None:
    assert np.allclose(softmax(np.array([2, 1, 0.5])).round(2), [0.63, 0.23, 0.14])
    assert "[0.63, 0.23, 0.14]" in Q002["full_answer"]
    assert round(math.sqrt(128), 1) == 11.3 and "11.3" in EXPLAINER["body"]
    assert round(1 / math.sqrt(64), 3) == 0.125 and "0.125" in EXPLAINER["body"]
    assert round(math.exp(8), -3) == 3000 and "e^8 \\approx 3000" in EXPLAINER["body"]
    assert "0.506" in Q002["follow_ups"][0]["expected_answer"]
    assert Q002["follow_ups"][0]["expected_number"] == round(float(softmax(Q[0] @ K.T / 2)[0]), 3)


def test_explainer_has_every_section_and_explorable() -> None:
    body = EXPLAINER["body"]
    for name in ("variance", "saturation", "sqrt_vs_d", "judges"):
        assert f"[[explorable:{name}]]" in body
    for needle in ("Jacobian", "T5", "μP", "QK-norm", "GPT-2", "Llama 2 7B", "Why √d and not d"):
        assert needle in body
    assert "[[explorable:worked_example]]" in Q002["full_answer"]


@pytest.mark.django_db
def test_migration_loaded_everything(seed_content: None) -> None:
    slugs = set(Question.objects.filter(status=Status.PUBLISHED).values_list("slug", flat=True))
    assert slugs == {Q002["slug"], Q003["slug"], Q004["slug"]}
    assert Page.objects.get(slug=EXPLAINER["slug"]).status == Status.PUBLISHED
    q = Question.objects.get(slug=Q003["slug"])
    assert q.follow_ups.count() == 4 and q.wrong_answers.count() == 4


def test_no_math_is_broken_by_an_odd_dollar() -> None:
    for text in (Q002["full_answer"], Q003["full_answer"], Q004["full_answer"], EXPLAINER["body"]):
        inline = re.sub(r"\$\$.+?\$\$", "", text, flags=re.DOTALL)
        assert inline.count("$") % 2 == 0
