"""The sentence-level assessor: paraphrases, refutations, stuffing, evidence and messages.

Pure: no database. The specs come from the content files, as the candidates get them.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from questions import assessment as a
from questions.assessment_eval import EVAL_DIR, eval_set_read
from questions.content_files import content_bundle

MAIN = "why-divide-before-softmax"
BY_HAND = "scaled-dot-product-attention-by-hand"
MIXING = "why-divide-before-mixing"


def _lines(raw: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in raw.splitlines() if line.strip())


def specs(slug: str) -> tuple[list[a.KeyPointSpec], list[a.WrongAnswerSpec]]:
    data = content_bundle().question(slug)
    kps = [a.KeyPointSpec(k["slug"], k["label"], _lines(k["patterns"])) for k in data["key_points"]]
    was = [
        a.WrongAnswerSpec(w["slug"], w["statement"], _lines(w["patterns"]))
        for w in data["wrong_answers"]
    ]
    return kps, was


def follow_up_specs(slug: str, ordering: int) -> list[a.KeyPointSpec]:
    fu = content_bundle().question(slug)["follow_ups"][ordering]
    return [a.KeyPointSpec(k["slug"], k["label"], _lines(k["patterns"])) for k in fu["key_points"]]


def assess(text: str, slug: str = MAIN) -> a.TextAssessment:
    return a.assess_text(text, *specs(slug))


# --- The failures the issue lists ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("The weights stop being normalised and can sum to more than one.", "sums-to-one"),
        ("Bump the learning rate up for the attention projections.", "larger-learning-rate"),
        ("Multiply V by 1/sqrt(d_k) after the softmax.", "scale-values"),
        ("The right normaliser is d_k itself.", "divide-by-dk"),
    ],
)
def test_paraphrased_wrong_answers_are_recognised(text: str, slug: str) -> None:
    assert assess(text).wrong_answer == slug


@pytest.mark.parametrize(
    "text",
    [
        "Dividing by d_k instead would over-shrink the scores.",
        "Softmax already makes the weights sum to one, so the division isn't about normalisation.",
        "Someone might say just raise the learning rate, but the saturated softmax passes "
        "almost no signal back.",
        "It's a common myth that the 1/sqrt(d_k) makes the rows sum to one.",
        "Instead of scaling the values, you scale the scores, because only they reach the softmax.",
        "Dividing the values by sqrt(d_k) after the softmax changes nothing about saturation.",
        "A larger learning rate won't bring the gradient back.",
    ],
)
def test_refutations_are_not_rebutted(text: str) -> None:
    result = assess(text)
    assert result.wrong_answer is None
    # A refuted claim may still be explained: then it is denied evidence, with its sentence.
    wrong_slugs = {w.slug for w in specs(MAIN)[1]}
    seen = [e for e in result.evidence if e.slug in wrong_slugs]
    assert all(e.negated and e.stance in (a.NEGATED, a.REFUTED) and e.sentence for e in seen)


def test_a_refutation_is_shown_as_denied() -> None:
    result = assess("It's a common myth that the 1/sqrt(d_k) makes the rows sum to one.")
    denied = [e for e in result.evidence if e.slug == "sums-to-one"]
    assert denied and denied[0].stance == a.REFUTED and denied[0].negated


def test_a_paraphrase_of_every_key_point_scores_full() -> None:
    text = (
        "Longer vectors give dot products with a wider spread, roughly the square root of their "
        "length. Then a single key grabs essentially the entire distribution, and the "
        "projection matrices receive next to no learning signal. Dividing by the square root "
        "brings the spread back to about one whatever the head size."
    )
    result = assess(text)
    assert result.score == 1.0
    assert result.wrong_answer is None


@pytest.mark.parametrize(
    "text",
    [
        "variance grows with d_k softmax saturates " * 3,
        "variance, d_k, sqrt, softmax, saturation, one-hot, gradient, vanishing, unit variance",
        "Keywords: variance grows, softmax saturates, vanishing gradients, unit variance.",
        "dot product variance d_k softmax saturation gradient vanishing learning stalls",
        "spike spike softmax slope dies divide divide",
    ],
)
def test_keyword_stuffing_earns_nothing(text: str) -> None:
    assert a.is_stuffing(text)
    result = assess(text)
    assert result.stuffing and result.key_points == [] and result.score == 0.0
    assert result.wrong_answer is None
    assert result.as_dict()["stuffing"] is True


@pytest.mark.parametrize(
    "text",
    [
        "Tiny gradients, flat loss.",
        "Saturation, then slow training.",
        "Var(QK^T) ∝ d_k → softmax saturates → vanishing gradients. /√d_k restores unit variance.",
        "Var(Σ_i q_i k_i) = d_k ⇒ s ~ ±√d_k. Var(s/√d_k) = 1 for every d_k.",
    ],
)
def test_terse_and_mathematical_answers_are_not_stuffing(text: str) -> None:
    assert not a.is_stuffing(text)


def test_the_by_hand_recipe_is_the_formula() -> None:
    result = assess("Q K^T, divide by sqrt(d_k), softmax each row, multiply by V", BY_HAND)
    assert "formula" in result.key_points
    bullets = "- scores = Q K^T\n- scale by 1/√d_k\n- row-wise softmax\n- output = weights @ V"
    assert "formula" in assess(bullets, BY_HAND).key_points


def test_negation_of_a_key_point_does_not_count_and_without_does_not_negate() -> None:
    assert "softmax-saturates" not in assess("The softmax does not saturate.").key_points
    assert "gradients-vanish" not in assess("The gradients never vanish here.").key_points
    assert "softmax-saturates" in assess("Without the division the softmax saturates.").key_points
    # "almost nothing" says tiny, it denies nothing.
    text = "The gradients to W_Q and W_K shrink to almost nothing."
    assert "gradients-vanish" in assess(text).key_points


def test_a_supposition_is_not_a_claim() -> None:
    assert "gradients-vanish" not in assess("If the gradients are small, use Adam.").key_points
    assert "gradients-vanish" in assess("If you drop it, the gradients vanish.").key_points


def test_a_denied_clause_denies_a_claim_far_from_its_negator() -> None:
    text = "You can't train your way out of a saturated softmax with bigger steps."
    assert assess(text).wrong_answer is None
    text = "A larger learning rate just makes the rest of the model unstable."
    assert assess(text).wrong_answer is None
    assert assess("Some people bump the learning rate, which does not help.").wrong_answer is None


def test_evidence_names_the_sentence_that_earned_each_point() -> None:
    text = "The variance of q·k grows with d_k. So the softmax saturates."
    result = assess(text)
    earned = {e.slug: e.sentence for e in result.evidence if not e.negated}
    assert earned["variance-grows"] == "the variance of q·k grows with d_k"
    assert earned["softmax-saturates"] == "so the softmax saturates"
    as_dict = result.as_dict()["evidence"]
    assert {"slug", "matched", "negated", "sentence", "stance"} <= set(as_dict[0])
    json.dumps(result.as_dict())


def test_the_rebuttal_carries_the_sentence_that_triggered_it() -> None:
    result = assess("Scores grow with d_k. Just scale the values instead of the scores.")
    assert result.wrong_answer == "scale-values"
    trigger = [e for e in result.evidence if e.slug == "scale-values" and not e.negated]
    assert trigger[0].sentence == "just scale the values instead of the scores"
    assert trigger[0].stance == a.ASSERTED


@pytest.mark.parametrize("slug", [MAIN, BY_HAND, MIXING])
def test_model_answers_score_full_and_rebuttals_are_not_the_mistake(slug: str) -> None:
    data = content_bundle().question(slug)
    for field in ("short_answer", "full_answer"):
        result = assess(data[field], slug)
        assert result.score == 1.0 and result.wrong_answer is None, field
    for wrong in data["wrong_answers"]:
        assert assess(wrong["statement"], slug).wrong_answer == wrong["slug"]
        assert assess(wrong["rebuttal"], slug).wrong_answer is None, wrong["slug"]


# --- Concepts and refutation cues in the patterns ---------------------------------------------


def test_concept_lines_are_stemmed_windowed_and_negatable() -> None:
    point = a.KeyPointSpec("k", "k", ("~ weight normalise",))
    assert a.assess_text("the weights are normalized", [point]).key_points == ["k"]
    assert a.assess_text("each weight gets normalising", [point]).key_points == ["k"]
    assert a.assess_text("the weights are not normalised", [point]).key_points == []
    far = "the weight " + "and then some more words here " * 3 + "is normalised"
    assert a.assess_text(far, [point]).key_points == []
    phrase = a.KeyPointSpec("p", "p", ("~ fan_out score|total",))
    assert a.assess_text("the totals fan out", [phrase]).key_points == ["p"]
    assert a.assess_text("the totals go out and fan", [phrase]).key_points == []


def test_a_concept_that_spells_a_negation_is_the_claim() -> None:
    point = a.KeyPointSpec("k", "k", ("~ no error",))
    assert a.assess_text("there is no error at all", [point]).key_points == ["k"]


def test_exclusion_lines_rule_a_claim_out_of_the_sentence() -> None:
    wrong = a.WrongAnswerSpec("w", "w", (r"sum to one", r"! softmax already"))
    assert a.nearest_wrong_answer("the division makes them sum to one", [wrong])[0] == "w"
    assert a.nearest_wrong_answer("softmax already makes them sum to one", [wrong])[0] is None


def test_the_claim_asserted_most_often_wins() -> None:
    first = a.WrongAnswerSpec("first", "first", (r"\bfoo\b",))
    second = a.WrongAnswerSpec("second", "second", (r"\bbar\b",))
    assert a.nearest_wrong_answer("foo. bar. bar.", [first, second])[0] == "second"
    assert a.nearest_wrong_answer("foo. bar.", [first, second])[0] == "first"


def test_sentences_and_bullets() -> None:
    assert a.split_sentences("a is 0.125. b, e.g. c! d\n- one\n- two\nend") == [
        "a is 0.125",
        "b, e.g. c",
        "d",
        "one; two",
        "end",
    ]


# --- Follow-up messages ------------------------------------------------------------------------


def test_number_with_tolerance_zero_never_says_within_zero() -> None:
    result = a.check_number("63", 64.0, 0.0)
    assert not result.correct
    assert result.message == a.NUMBER_WRONG_INTEGER.format(got=63.0)
    assert "within" not in result.message
    assert a.check_number("0.5", 0.506, 0.0).message == a.NUMBER_WRONG_EXACT.format(got=0.5)
    with_tolerance = a.check_number("0.51", 0.506, 0.001).message
    assert with_tolerance == a.NUMBER_WRONG.format(got=0.51, tolerance=0.001)


def test_text_follow_up_names_the_missing_key_points_by_label() -> None:
    kps = follow_up_specs(MAIN, 1)
    passed, detail = a.check_text("The softmax saturates and the gradients become tiny.", kps)
    assert passed.correct
    assert detail.missed == ["fu-no-error"]
    assert passed.message == a.TEXT_PASSED_MISSING.format(
        missing="\u201cThe loss just plateaus; no error is raised\u201d"
    )
    partial, _ = a.check_text("The softmax saturates.", kps)
    assert not partial.correct
    assert partial.message == a.TEXT_PARTIAL.format(
        missing="\u201cThe gradients become tiny\u201d, "
        "\u201cThe loss just plateaus; no error is raised\u201d"
    )
    stuffed, _ = a.check_text("saturation, gradients, plateau, no error, silent", kps)
    assert not stuffed.correct and stuffed.message == a.TEXT_STUFFING


def test_labels_in_messages_are_plain_text() -> None:
    kps = follow_up_specs(BY_HAND, 1)
    result, _ = a.check_text("The softmax would become almost uniform.", kps)
    assert "$" not in result.message and "1/d_k" in result.message


PASS_MESSAGES = (a.NUMBER_CORRECT, a.SHAPE_CORRECT, a.CHOICE_CORRECT, a.TEXT_PASSED)


@pytest.mark.parametrize(
    "result",
    [
        a.check_number("64", 64.0),
        a.check_number("63", 64.0),
        a.check_number("nothing", 64.0),
        a.check_shape("(n, n)", "(n, n)"),
        a.check_shape("(n, d)", "(n, n)"),
        a.check_choice("No", ["Yes", "No"], "No"),
        a.check_choice("Yes", ["Yes", "No"], "No"),
        a.check_text("softmax saturates, gradients become tiny", follow_up_specs(MAIN, 1))[0],
        a.check_text("it raises", follow_up_specs(MAIN, 1))[0],
    ],
)
def test_a_check_reads_as_what_it_is(result: a.CheckResult) -> None:
    """The template colours a result by `correct`; the message must say the same thing."""
    reads_as_pass = result.message.startswith(PASS_MESSAGES)
    assert reads_as_pass is result.correct, result.message
    assert result.correct or result.message.startswith(("Not", "No ", "Pick", "Some", "None"))


# --- Speed ---------------------------------------------------------------------------------------


def test_speed_is_measured_on_the_evaluation_set(record_property, capsys) -> None:
    """Not a wall-clock assertion (the CI machine is shared); the figure is recorded and
    printed so a regression shows. Measured on this machine: under 1 ms per answer on
    average and under 10 ms for the longest; the budget is 20 ms."""
    cases = [(slug, c) for slug, cs in eval_set_read(EVAL_DIR).items() for c in cs]
    all_specs = {slug: specs(slug) for slug in {s for s, _ in cases}}
    # The first answer of a process compiles the patterns (cached after); time it apart.
    began = time.perf_counter()
    a.assess_text(cases[0][1].text, *all_specs[cases[0][0]])
    first_ms = (time.perf_counter() - began) * 1000
    worst = 0.0
    start = time.perf_counter()
    for slug, case in cases:
        began = time.perf_counter()
        a.assess_text(case.text, *all_specs[slug])
        worst = max(worst, time.perf_counter() - began)
    per_answer_ms = (time.perf_counter() - start) / len(cases) * 1000
    record_property("assess_ms_per_answer", round(per_answer_ms, 3))
    record_property("assess_ms_worst", round(worst * 1000, 3))
    record_property("assess_ms_first_call", round(first_ms, 3))
    with capsys.disabled():
        print(
            f"\nassess_text: {per_answer_ms:.2f} ms/answer, worst {worst * 1000:.2f} ms, "
            f"first call (compiling the patterns) {first_ms:.2f} ms"
        )
    assert len(cases) > 500


# --- Instructors' patterns: refused when catastrophic, bounded in time anyway ---------------


@pytest.mark.parametrize(
    "pattern", [r"^(a+)+$", r"(\w*)*", r"(?:x+y?)+", r"(\w+\s?)*$", r"((a+))+", r"(?:a|b+)+c"]
)
def test_nested_unbounded_repeats_are_catastrophic(pattern: str) -> None:
    assert a.pattern_is_catastrophic(pattern)


@pytest.mark.parametrize(
    "pattern", [r"(?:\w+ ){0,3}", r"(?:\w+\s+)*sqrt", r"\bdivid\w*\b", r"x*y*", r"(unclosed"]
)
def test_ordinary_patterns_are_not(pattern: str) -> None:
    assert not a.pattern_is_catastrophic(pattern)


def test_no_shipped_pattern_is_catastrophic() -> None:
    for question in content_bundle().questions:
        points = question["key_points"] + [
            kp for fu in question["follow_ups"] for kp in fu["key_points"]
        ]
        for item in points + question["wrong_answers"]:
            for line in _lines(item["patterns"]):
                assert not a.pattern_is_catastrophic(line.lstrip("!").strip()), line


def test_a_catastrophic_pattern_that_slipped_through_cannot_hang_an_answer() -> None:
    # ^(a+)+$ took a second at 25 characters with re, doubling with each one more: at 34 it
    # would run for hours. Old rows may hold such a pattern. The bound below only catches a
    # hang (the assessment itself takes milliseconds), so a busy machine cannot fail it.
    points = [a.KeyPointSpec("evil", "Evil", (r"^(a+)+$",)), a.KeyPointSpec("ok", "Ok", ("ok",))]
    results: list[a.TextAssessment] = []
    worker = threading.Thread(
        target=lambda: results.append(a.assess_text("a" * 34 + "b. It is ok.", points)),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=120)
    assert results, "the assessment hung on a catastrophic pattern"
    assert "ok" in results[0].key_points


def test_an_answer_whose_matching_times_out_is_assessed_without_that_pattern(caplog) -> None:
    # (a|aa)+$ defeats the regex module's own safeguards: it runs into the time bound.
    slow = r"(a|aa)+$"
    points = [a.KeyPointSpec("slow", "Slow", (slow,)), a.KeyPointSpec("ok", "Ok", ("ok",))]
    # Thirty sentences, each of which would time out on its own.
    text = " ".join(f"Line {i} reads {'a' * 40} then stops." for i in range(30)) + " It is ok."
    with caplog.at_level("WARNING", logger="questions.assessment"):
        result = a.assess_text(text, points)
    assert result.key_points == ["ok"]
    # Once per answer, not once per sentence: the pattern is left out after its first timeout.
    warnings = [r for r in caplog.records if "ran out of time" in r.getMessage()]
    assert len(warnings) == 1 and slow in warnings[0].getMessage()
