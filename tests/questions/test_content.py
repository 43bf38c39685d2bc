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
# The question bank beyond the first three, one question per topic of the seed pages.
NEW_SLUGS = (
    "which-dimension-in-multi-head",
    "why-root-dk-not-dk",
    "what-flashattention-changes",
    "is-the-scale-ever-different",
    "why-scale-at-initialisation",
    "incident-loss-flattens",
    "does-the-scale-change-the-winner",
)
NEW = {slug: BUNDLE.question(slug) for slug in NEW_SLUGS}

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
    assert slugs == {Q002["slug"], Q003["slug"], Q004["slug"], *NEW_SLUGS}
    assert Page.objects.get(slug=EXPLAINER["slug"]).status == Status.PUBLISHED
    q = Question.objects.get(slug=Q003["slug"])
    assert q.follow_ups.count() == 4 and q.wrong_answers.count() == 7


def test_no_math_is_broken_by_an_odd_dollar() -> None:
    answers = [q["full_answer"] for q in (Q002, Q003, Q004, *NEW.values())]
    for text in (*answers, EXPLAINER["body"]):
        inline = re.sub(r"\$\$.+?\$\$", "", text, flags=re.DOTALL)
        assert inline.count("$") % 2 == 0


# --- the content is consistent with itself and with the site ----------------------

PROSE = {
    q["slug"]: "\n".join(
        [q["title"], q["prompt"], q["short_answer"], q["full_answer"]]
        + [w["statement"] + "\n" + w["rebuttal"] for w in q.get("wrong_answers", [])]
        + [f["prompt"] + "\n" + f["expected_answer"] for f in q.get("follow_ups", [])]
    )
    for q in (Q002, Q003, Q004, *NEW.values())
} | {EXPLAINER["slug"]: EXPLAINER["lead"] + "\n" + EXPLAINER["body"]}


@pytest.mark.parametrize(
    ("arxiv", "authors"),
    [
        ("1706.03762", "Vaswani et al., 2017"),
        ("2203.03466", "Yang et al., 2022"),
        ("2302.05442", "Dehghani et al., 2023"),
    ],
)
def test_each_paper_is_linked_to_its_arxiv_page(arxiv: str, authors: str) -> None:
    assert f"[{authors}](https://arxiv.org/abs/{arxiv})" in EXPLAINER["body"]


@pytest.mark.parametrize("slug", sorted(PROSE))
@pytest.mark.parametrize(
    "phantom", ["the lesson", "lesson's", "chapter", "the softmax page", "capstone", "napkin"]
)
def test_no_answer_cites_a_page_the_site_does_not_have(slug: str, phantom: str) -> None:
    assert phantom not in PROSE[slug].lower()


def test_the_mixing_question_says_head_size_not_list_length() -> None:
    # "list length" reads as sequence length: the very wrong-dimension mistake the grader names.
    assert "head size" in Q004["title"] and "list" not in Q004["title"]
    assert "lists get longer" not in PROSE[Q004["slug"]]
    assert "vectors get longer (a larger head size)" in Q004["prompt"]


def test_answers_link_the_sites_own_sections() -> None:
    for slug in (Q003["slug"], Q004["slug"]):
        assert "](/explainer/#" in PROSE[slug], slug
    assert "](/explainer/#demonstration)" in Q003["full_answer"]


def test_the_worked_example_quoted_by_the_mixing_answer() -> None:
    # Q004 points at the worked example, whose d_k is 4: it divides by √4 = 2.
    assert "(/questions/scaled-dot-product-attention-by-hand/) $d_k = 4$" in Q004["full_answer"]
    assert "divide by $\\sqrt{4} = 2$" in Q002["full_answer"]


def test_no_caret_exponents_or_raw_floats_in_the_prose() -> None:
    for slug, text in PROSE.items():
        outside_math = re.sub(r"\$\$.+?\$\$|\$[^$\n]+\$", "", text, flags=re.DOTALL)
        assert not re.search(r"\d\s*(\u00d7|x)\s*10\^", outside_math), slug
        assert "Infinity" not in outside_math and not re.search(r"\d\.\d{9,}", outside_math), slug


@pytest.mark.parametrize(
    ("quoted", "value", "expected"),
    [
        ("scores around ±8", math.sqrt(64), 8),
        ("256 numbers scores around ±16", math.sqrt(256), 16),
        ("every score would be 8 times larger", math.sqrt(64), 8),
        ("$e^1 \\approx 2.7$", round(math.e, 1), 2.7),
        ("behaves like temperature 0.1", 1 / 10, 0.1),
        ("divides by about 11.3", round(math.sqrt(128), 1), 11.3),
        ("which is\n0.125 for $d = 64$", 1 / math.sqrt(64), 0.125),
        ("largest possible entry is $\\tfrac14$", 0.5 * (1 - 0.5), 0.25),
    ],
)
def test_each_explainer_figure_is_computed(quoted: str, value: float, expected: float) -> None:
    assert value == pytest.approx(expected)
    assert quoted in EXPLAINER["body"]


def test_every_level_has_questions() -> None:
    levels = [q["level"] for q in BUNDLE.questions]
    assert {level: levels.count(level) for level in ("L1", "L2", "L3")} == {
        "L1": 3,
        "L2": 4,
        "L3": 3,
    }


WINNER = "does-the-scale-change-the-winner"


@pytest.mark.parametrize(
    ("slug", "quoted", "value", "expected"),
    [
        ("why-root-dk-not-dk", "0.125 at $d_k = 64$", 1 / math.sqrt(64), 0.125),
        ("why-root-dk-not-dk", "$8 / 64 = 0.125$", 8 / 64, 0.125),
        ("why-root-dk-not-dk", "$e^1 \\approx 2.7$", round(math.e, 1), 2.7),
        ("why-root-dk-not-dk", "a gap of 8 means about 3000", round(math.exp(8), -3), 3000),
        ("which-dimension-in-multi-head", "512 / 8 = 64", 512 / 8, 64),
        ("which-dimension-in-multi-head", "$\\sqrt{64} = 8$", math.sqrt(64), 8),
        (
            "which-dimension-in-multi-head",
            "$\\sqrt{512} \\approx 22.6$",
            round(math.sqrt(512), 1),
            22.6,
        ),
        ("which-dimension-in-multi-head", "almost three times too much", math.sqrt(512 / 64), 2.83),
        ("which-dimension-in-multi-head", "divides by about 11.3", round(math.sqrt(128), 1), 11.3),
        (
            "what-flashattention-changes",
            "$\\sqrt{128} \\approx 11.3$",
            round(math.sqrt(128), 1),
            11.3,
        ),
        ("incident-loss-flattens", "$\\sqrt{128} \\approx 11.3$", round(math.sqrt(128), 1), 11.3),
        ("why-scale-at-initialisation", "spread 8 at $d_k = 64$", math.sqrt(64), 8),
        ("why-scale-at-initialisation", "largest possible value is 0.25", 0.5 * (1 - 0.5), 0.25),
        (WINNER, "a gap of 8 gives $e^8 \\approx 3000$", round(math.exp(8), -3), 3000),
        (WINNER, "a ratio of $e \\approx 2.7$", round(math.e, 1), 2.7),
        (WINNER, "$\\sqrt{64} = 8$", math.sqrt(64), 8),
        (WINNER, "behaves like temperature 0.1", 1 / 10, 0.1),
    ],
)
def test_each_figure_of_the_new_questions_is_computed(
    slug: str, quoted: str, value: float, expected: float
) -> None:
    assert value == pytest.approx(expected, abs=0.01)
    assert quoted in PROSE[slug]


def test_the_number_follow_ups_of_the_new_questions() -> None:
    p = np.linspace(0, 1, 1001)
    expected = {
        "why-root-dk-not-dk": 1 / math.sqrt(64),
        "which-dimension-in-multi-head": math.sqrt(64),
        "incident-loss-flattens": math.sqrt(128),
        # The largest entry p_i (1 - p_i) of the softmax Jacobian.
        "why-scale-at-initialisation": float((p * (1 - p)).max()),
    }
    for slug, value in expected.items():
        first = next(fu for fu in NEW[slug]["follow_ups"] if fu["check_kind"] == "number")
        assert first["expected_number"] == pytest.approx(value, abs=first["tolerance"] + 1e-9)
    llama = NEW["which-dimension-in-multi-head"]["follow_ups"][1]
    assert llama["expected_number"] == pytest.approx(math.sqrt(128), abs=llama["tolerance"])
