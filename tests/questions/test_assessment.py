"""The pure assessment module: no database, no Django."""

from __future__ import annotations

import pytest

from questions import assessment as a
from questions.content_files import content_bundle

Q002, Q003, Q004 = (
    content_bundle().question(slug)
    for slug in (
        "scaled-dot-product-attention-by-hand",
        "why-divide-before-softmax",
        "why-divide-before-mixing",
    )
)


def specs(data: dict) -> tuple[list[a.KeyPointSpec], list[a.WrongAnswerSpec]]:
    kps = [
        a.KeyPointSpec(kp["slug"], kp["label"], tuple(kp["patterns"].splitlines()))
        for kp in data["key_points"]
    ]
    was = [
        a.WrongAnswerSpec(w["slug"], w["statement"], tuple(w["patterns"].splitlines()))
        for w in data["wrong_answers"]
    ]
    return kps, was


KPS, WAS = specs(Q003)


def assess(text: str) -> a.TextAssessment:
    return a.assess_text(text, KPS, WAS)


def test_seed_short_answer_covers_every_key_point() -> None:
    result = assess(Q003["short_answer"])
    assert result.key_points == [
        "variance-grows",
        "softmax-saturates",
        "gradients-vanish",
        "scale-restores-unit-variance",
    ]
    assert result.wrong_answer is None
    assert result.score == 1.0


def test_negated_claim_is_not_the_wrong_answer() -> None:
    assert assess("A larger learning rate recovers it.").wrong_answer == "larger-learning-rate"
    assert assess("a larger learning rate can't recover it").wrong_answer is None
    assert assess("A larger learning rate cannot recover the lost gradient.").wrong_answer is None
    assert assess("A larger learning rate won't fix a saturated softmax.").wrong_answer is None
    assert assess("Raising the learning rate does not help either.").wrong_answer is None


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("The division keeps the attention weights summing to one.", "sums-to-one"),
        ("We could just scale the values instead of the scores.", "scale-values"),
        ("Divide by d_k instead, it works just as well.", "divide-by-dk"),
        ("A bigger learning rate would compensate for it.", "larger-learning-rate"),
    ],
)
def test_each_wrong_answer_is_recognised(text: str, slug: str) -> None:
    assert assess(text).wrong_answer == slug


@pytest.mark.parametrize(
    "text",
    [
        "The division does not keep the weights summing to one; softmax already does that.",
        "Scaling the values would not help, they never reach the softmax.",
        "Dividing by sqrt(d_k), not by d_k, keeps unit variance.",
    ],
)
def test_rebutting_a_wrong_answer_is_not_making_it(text: str) -> None:
    assert assess(text).wrong_answer is None


def test_negated_key_point_does_not_count() -> None:
    assert "softmax-saturates" in assess("Without the division the softmax saturates.").key_points
    assert "softmax-saturates" not in assess("The softmax does not saturate.").key_points
    assert "gradients-vanish" not in assess("The gradients never vanish here.").key_points


def test_without_is_not_a_negator() -> None:
    result = assess("Without the division, the variance of the scores grows with d_k.")
    assert "variance-grows" in result.key_points


def test_wrong_answer_costs_a_penalty_and_score_is_clamped() -> None:
    text = "The variance grows with d_k. A larger learning rate recovers it."
    result = assess(text)
    assert result.key_points == ["variance-grows"]
    assert result.score == round(1 / 4 - a.WRONG_ANSWER_PENALTY, 2) == 0.0
    assert assess("The division keeps the weights summing to one.").score == 0.0


def test_assessment_is_deterministic_and_explains_itself() -> None:
    text = "Softmax saturates and a larger learning rate can't recover it."
    first, second = assess(text), assess(text)
    assert first == second
    negated = [e for e in first.evidence if e.negated]
    assert any(e.slug == "larger-learning-rate" for e in negated)
    assert first.summary() == {
        "key_points": ["softmax-saturates"],
        "wrong_answer": None,
        "score": 0.25,
    }


def test_resemblance_without_patterns() -> None:
    wrong = [a.WrongAnswerSpec("w", "Softmax temperature equals model width always")]
    assert a.nearest_wrong_answer("softmax temperature equals model width", wrong)[0] == "w"
    assert a.nearest_wrong_answer("temperature never equals model width", wrong)[0] is None


def test_broken_pattern_is_skipped() -> None:
    kp = a.KeyPointSpec("k", "k", ("([unclosed", "fine"))
    assert a.assess_text("this is fine", [kp]).key_points == ["k"]


@pytest.mark.parametrize(
    "text",
    ["(n, n)", "(n,n)", "( n , n )", "[n, n]", "n x n", "n \u00d7 n", "n by n", "It is (N, N)."],
)
def test_shape_normalisation(text: str) -> None:
    assert a.normalise_shape(text) == "(n, n)"
    assert a.check_shape(text, "(n, n)").correct


def test_shape_wrong_and_missing() -> None:
    wrong = a.check_shape("(n, d)", "(n, n)")
    assert not wrong.correct and wrong.message == a.SHAPE_WRONG.format(got="(n, d)")
    missing = a.check_shape("square", "(n, n)")
    assert not missing.correct and missing.message == a.SHAPE_NOT_FOUND


@pytest.mark.parametrize(
    ("text", "ok"),
    [("64", True), ("the head width, 64", True), ("√64", True), ("64.0", True), ("512", False)],
)
def test_number_check(text: str, ok: bool) -> None:
    assert a.check_number(text, 64.0, 0.0).correct is ok


def test_number_tolerance_and_messages() -> None:
    assert a.check_number("0.5065", 0.506, 0.001).correct
    assert not a.check_number("0.51", 0.506, 0.001).correct
    assert a.check_number("no idea", 64).message == a.NUMBER_NOT_FOUND
    assert a.check_number("64", 64).message == a.NUMBER_CORRECT


def test_choice_check() -> None:
    choices = ["Yes, it is learned", "No, it is a fixed recipe"]
    assert a.check_choice(" no, it is a  fixed recipe ", choices, choices[1]).correct
    assert a.check_choice(choices[0], choices, choices[1]).message == a.CHOICE_WRONG
    assert a.check_choice("maybe", choices, choices[1]).message == a.CHOICE_MISSING


def test_text_follow_up_check() -> None:
    fu = Q003["follow_ups"][1]
    kps = [
        a.KeyPointSpec(k["slug"], k["label"], tuple(k["patterns"].splitlines()))
        for k in fu["key_points"]
    ]
    passed, detail = a.check_text(fu["expected_answer"], kps)
    assert passed.correct and passed.message == a.TEXT_PASSED
    assert detail.missed == []
    failed, _ = a.check_text("It raises a ValueError.", kps)
    labels = ", ".join(f"\u201c{a.plain_label(k.label)}\u201d" for k in kps)
    assert not failed.correct and failed.message == a.TEXT_NONE.format(missing=labels)


@pytest.mark.parametrize("data", [Q002, Q003, Q004])
def test_every_seed_short_answer_scores_well(data: dict) -> None:
    kps, was = specs(data)
    result = a.assess_text(data["short_answer"], kps, was)
    assert result.wrong_answer is None
    assert result.score >= 0.75


@pytest.mark.parametrize("data", [Q002, Q003, Q004])
def test_every_seed_text_follow_up_passes_on_its_expected_answer(data: dict) -> None:
    for fu in data["follow_ups"]:
        if fu["check_kind"] != "text":
            continue
        kps = [
            a.KeyPointSpec(k["slug"], k["label"], tuple(k["patterns"].splitlines()))
            for k in fu["key_points"]
        ]
        assert a.check_text(fu["expected_answer"], kps)[0].correct, fu["prompt"]


@pytest.mark.parametrize("wrong", Q003["wrong_answers"], ids=lambda w: w["slug"])
def test_each_statement_is_its_own_wrong_answer_and_its_denial_is_not(wrong: dict) -> None:
    statement = wrong["statement"]
    assert assess(statement).wrong_answer == wrong["slug"]
    denial = "It is not true that " + statement[0].lower() + statement[1:]
    assert assess(denial).wrong_answer is None


def test_latex_and_root_sign_are_read_as_sqrt() -> None:
    for text in ("divide by $\\sqrt{d_k}$ to keep unit variance", "divide by √d_k: unit variance"):
        result = assess(text)
        assert "scale-restores-unit-variance" in result.key_points
        assert result.wrong_answer is None
