"""Assessment by meaning: claims written as sentences, read from labelled example answers.

Pure: the specs and examples come from the content files and the evaluation set, as an
instructor authors them, never from the database.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from questions import assessment as a
from questions.assessment import meaning
from questions.assessment.language import _FUNCTION_WORDS, _STOPWORDS
from questions.assessment_eval import TargetSpecs, cross_validate, eval_set_read
from questions.content_files import content_bundle

WINNER = "does-the-scale-change-the-winner"


def _lines(raw: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in raw.splitlines() if line.strip())


def specs(slug: str) -> TargetSpecs:
    """A question as candidates get it: its specs and its `dev` answers as examples."""
    data = content_bundle().question(slug)
    points = [
        a.KeyPointSpec(k["slug"], k["label"], _lines(k["patterns"])) for k in data["key_points"]
    ]
    wrongs = [
        a.WrongAnswerSpec(w["slug"], w["statement"], _lines(w.get("patterns", "")))
        for w in data["wrong_answers"]
    ]
    examples = [
        a.ExampleSpec(c.text, c.key_points, c.wrong_answer or "")
        for c in eval_set_read()[slug]
        if c.split == "dev" and c.target == "question"
    ]
    return TargetSpecs(points, wrongs, examples)


@pytest.fixture(scope="module")
def winner() -> TargetSpecs:
    return specs(WINNER)


def assess(text: str, target: TargetSpecs) -> a.TextAssessment:
    return a.assess_text(text, target.key_points, target.wrong_answers, target.examples)


# --- Without patterns, meaning decides -------------------------------------------------------


def test_a_question_without_patterns_credits_a_good_answer(winner: TargetSpecs) -> None:
    result = assess(
        "The largest score keeps the largest weight, because dividing by a positive number "
        "keeps the order. What changes is that the other keys still get a real share.",
        winner,
    )
    assert {"order-kept", "how-soft"} <= set(result.key_points)
    assert result.wrong_answer is None


def test_each_decision_names_the_sentence_and_the_example_it_resembled(
    winner: TargetSpecs,
) -> None:
    text = "Same winner, softer weights, fixed temperature."
    result = assess(text, winner)
    authored = {e.text for e in winner.examples} | {k.label for k in winner.key_points}
    credited = [e for e in result.evidence if e.slug in result.key_points]
    assert credited and {e.slug for e in credited} == set(result.key_points)
    for item in credited:
        assert item.via == a.VIA_MEANING and item.stance == a.ASSERTED and not item.negated
        assert item.sentence in a.normalise_text(text)
        assert item.rule in authored


def test_a_wrong_answer_in_new_words_is_diagnosed(winner: TargetSpecs) -> None:
    result = assess("Dividing the scores makes a different key the winner.", winner)
    assert result.wrong_answer == "changes-the-winner"
    evidence = next(e for e in result.evidence if e.slug == "changes-the-winner")
    assert evidence.via == a.VIA_MEANING and evidence.stance == a.ASSERTED


@pytest.mark.parametrize(
    "text",
    [
        # Denied, attributed to someone else, rejected, answered by the next sentence.
        "The division does not change which key gets the most weight.",
        "Some people think the division changes which key gets the most weight.",
        "It's a myth that dividing makes a different key the winner.",
        "A reviewer said the division changes which key wins. That is wrong.",
        "Rather than changing which key gets the most weight, it softens the weights.",
        "If the division changed which key wins, attention would be unstable.",
    ],
)
def test_a_denial_or_refutation_is_never_read_as_the_wrong_answer(
    winner: TargetSpecs, text: str
) -> None:
    assert assess(text, winner).wrong_answer is None


def test_a_claim_that_contains_a_negation_is_read_in_its_own_words(
    winner: TargetSpecs,
) -> None:
    # The wrong answer itself says "nothing", and so do its examples: a negation there is
    # the claim, not its denial.
    readings = meaning.read(
        "The division changes nothing.",
        winner.key_points,
        winner.wrong_answers,
        winner.examples,
        slugs=["changes-nothing"],
    )
    assert readings["changes-nothing"].verdict is not meaning.NO


def test_keyword_lists_and_off_topic_answers_earn_nothing(winner: TargetSpecs) -> None:
    for text in (
        "temperature order winner softmax soft weights argmax ranking",
        "Keywords: same winner, temperature, softer weights",
        "FlashAttention computes attention in tiles.",
    ):
        result = assess(text, winner)
        assert result.key_points == [] and result.wrong_answer is None, text


def test_the_reading_is_deterministic(winner: TargetSpecs) -> None:
    text = "It keeps the order but acts as a temperature, so the mix stays soft."
    first, second = assess(text, winner), assess(text, winner)
    assert first == second


def test_without_examples_the_authored_sentence_alone_decides(winner: TargetSpecs) -> None:
    bare = TargetSpecs(winner.key_points, winner.wrong_answers)
    label = next(k.label for k in bare.key_points if k.slug == "order-kept")
    assert "order-kept" in assess(label, bare).key_points
    assert assess("GPUs are fast at matrix multiplication.", bare).key_points == []


def test_abstaining_credits_nothing_where_no_rule_can_decide(winner: TargetSpecs) -> None:
    readings = meaning.read(
        "Attention.",
        winner.key_points,
        winner.wrong_answers,
        winner.examples,
        slugs=[k.slug for k in winner.key_points],
    )
    assert all(r.verdict is not meaning.YES for r in readings.values())


# --- With patterns, the rules decide --------------------------------------------------------


def test_where_a_claim_has_patterns_the_rules_decide_and_examples_change_nothing() -> None:
    points = [a.KeyPointSpec("hot", "It is hot.", (r"\bhot\b",))]
    examples = [a.ExampleSpec("It is very warm today.", ("hot",))] * 3
    result = a.assess_text("It is very warm today.", points, (), examples)
    assert result.key_points == []
    assert all(e.via != a.VIA_MEANING for e in result.evidence)


def test_the_model_is_loaded_only_when_something_is_read_by_meaning() -> None:
    code = (
        "import sys\n"
        "from questions import assessment as a\n"
        "a.assess_text('It is hot.', [a.KeyPointSpec('hot', 'Hot', (r'\\bhot\\b',))])\n"
        "print('wordllama' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "False"


def test_polarity_markers() -> None:
    assert meaning.NEGATION in meaning.markers("it does not change the winner")
    assert meaning.ATTRIBUTION in meaning.markers("some people think it changes the winner")
    assert meaning.REJECTION in meaning.markers("rather than changing the winner it softens")
    assert meaning.SUPPOSITION in meaning.markers("if it changed the winner")
    assert meaning.ANSWERED in meaning.markers("it changes the winner", ["that is wrong"])
    assert meaning.markers("the same key wins") == frozenset()


# --- Cross-validation ------------------------------------------------------------------------


def test_cross_validation_assesses_each_example_with_the_other_folds_only() -> None:
    points = [a.KeyPointSpec("hot", "It is hot.", ())]
    seen: list[tuple[str, tuple[str, ...]]] = []

    def recording(text, key_points, wrong_answers, examples):  # type: ignore[no-untyped-def]
        seen.append((text, tuple(e.text for e in examples)))
        return a.TextAssessment(["hot"] if "hot" in text else [], [], None, 0.0)

    examples = [a.ExampleSpec(f"hot {i}", ("hot",)) for i in range(4)] + [a.ExampleSpec("cold", ())]
    result = cross_validate(TargetSpecs(points, (), examples), folds=5, assess=recording)
    assert (result.n, result.folds) == (5, 5)
    assert result.key_point_f1 == 1.0 and result.wrong_answer_accuracy == 1.0
    assert result.false_rebuttals == 0
    for text, trained_on in seen:
        assert text not in trained_on and len(trained_on) == 4
    assert sorted(t for t, _ in seen) == sorted(e.text for e in examples)


def test_cross_validation_without_examples() -> None:
    result = cross_validate(TargetSpecs([a.KeyPointSpec("hot", "Hot", ())]))
    assert (result.n, result.folds, result.false_rebuttals) == (0, 0, 0)
    assert result.as_dict()["key_point_f1"] == 1.0


# Measured when the reader was written (5 folds over the question's own 22 examples).
WINNER_CROSS_VALIDATION_FLOOR = {"key_point_f1": 0.55, "wrong_answer_accuracy": 0.7}


def test_cross_validation_of_the_question_authored_by_meaning(winner: TargetSpecs) -> None:
    result = cross_validate(winner)
    assert result.n == len(winner.examples) >= 20
    assert result.key_point_f1 >= WINNER_CROSS_VALIDATION_FLOOR["key_point_f1"]
    assert result.wrong_answer_accuracy >= WINNER_CROSS_VALIDATION_FLOOR["wrong_answer_accuracy"]


# --- Keyword salads, on every question --------------------------------------------------------

_SALAD_WORD = re.compile(r"[A-Za-z][A-Za-z_-]{2,}")
# Content words only: a salad is what is left of the claims without their grammar.
_GRAMMAR = _FUNCTION_WORDS | _STOPWORDS


@pytest.mark.parametrize("slug", [q["slug"] for q in content_bundle().questions])
def test_a_keyword_salad_earns_no_key_point_on_any_question(slug: str) -> None:
    target = specs(slug)
    words: list[str] = []
    for text in [k.label for k in target.key_points] + [w.statement for w in target.wrong_answers]:
        words += [
            w
            for w in (w.lower() for w in _SALAD_WORD.findall(text))
            if w not in words and w not in _GRAMMAR
        ]
    for salad in (" ".join(words), ", ".join(words), "Keywords: " + " ".join(words[:8])):
        result = assess(salad, target)
        assert result.key_points == [] and result.wrong_answer is None, (slug, salad)
