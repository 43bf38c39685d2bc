"""The evaluation harness: `evaluate`, the labelled set, and `manage.py assess_eval` with the
floors CI holds the assessor to (they may only go up)."""

from __future__ import annotations

import json
from collections import Counter
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from questions import assessment as a
from questions.assessment_eval import (
    EVAL_DIR,
    EVAL_FIELDS,
    SPLITS,
    EvalCase,
    TargetSpecs,
    eval_cases_parse,
    eval_set_read,
    evaluate,
    follow_up_target,
)
from questions.content_files import content_bundle

REGISTERS = {
    "terse",
    "rambling",
    "mathematical",
    "non-native",
    "bullets",
    "paraphrase",
    "refutation",
    "partial",
    "off-topic",
    "stuffing",
    "correct-full",
}
MIN_PER_KEY_POINT = 40
MIN_PER_WRONG_ANSWER = 15

# Floors just under the figures measured when the assessor was written (dev / heldout, all
# questions together, and the main question on its own). Raise them when the assessor gets
# better; never lower them to make a change pass. (They were set again when answers by four
# other authors joined: 400 to the dev set, and 85 never tuned on to the held-out part; they
# are harder than the first author's own.)
FLOORS = {
    "dev": {"key_point_micro_f1": 0.975, "wrong_answer_accuracy": 0.985, "false_rebuttals": 0},
    "heldout": {"key_point_micro_f1": 0.95, "wrong_answer_accuracy": 0.96, "false_rebuttals": 0},
}
MAIN_FLOORS = {
    "dev": {"key_point_micro_f1": 0.965, "wrong_answer_accuracy": 0.98, "false_rebuttals": 0},
    "heldout": {"key_point_micro_f1": 0.94, "wrong_answer_accuracy": 0.94, "false_rebuttals": 0},
}
MAIN = "why-divide-before-softmax"


# --- evaluate() ----------------------------------------------------------------------------

POINTS = [a.KeyPointSpec("big", "Big", (r"\bbig\b",)), a.KeyPointSpec("hot", "Hot", (r"\bhot\b",))]
WRONGS = [a.WrongAnswerSpec("cold", "It is cold.", (r"\bcold\b",))]
TOY = TargetSpecs(POINTS, WRONGS)


def test_evaluate_counts_precision_recall_and_rebuttals() -> None:
    cases = [
        EvalCase("big and hot", key_points=("big", "hot")),  # both right
        EvalCase("big", key_points=("big", "hot")),  # misses hot
        EvalCase("hot", key_points=()),  # extra hot
        EvalCase("it is cold", wrong_answer="cold"),  # right rebuttal
        EvalCase("cold, I think", id="fr"),  # rebutted for what it did not say
        EvalCase("it is not cold", wrong_answer="cold"),  # missed rebuttal
    ]
    report = evaluate(cases, TOY)
    scores = {s.slug: s for s in report.key_points}
    assert (scores["big"].tp, scores["big"].fp, scores["big"].fn) == (2, 0, 0)
    assert (scores["hot"].tp, scores["hot"].fp, scores["hot"].fn) == (1, 1, 1)
    assert scores["hot"].precision == 0.5 and scores["hot"].recall == 0.5
    assert report.key_point_micro_f1 == pytest.approx(2 * 3 / (2 * 3 + 1 + 1))
    cold = report.wrong_answers[0]
    assert (cold.tp, cold.fp, cold.fn) == (1, 1, 1)
    assert report.wrong_answer_cases == 6 and report.wrong_answer_correct == 4
    assert report.wrong_answer_accuracy == pytest.approx(4 / 6)
    assert report.false_rebuttals == 1
    assert {m.case.text for m in report.misjudged} == {
        "big",
        "hot",
        "cold, I think",
        "it is not cold",
    }
    rebutted = next(m for m in report.misjudged if m.case.id == "fr")
    assert rebutted.false_rebuttal
    assert any(e.slug == "cold" and e.sentence == "cold, i think" for e in rebutted.evidence)
    assert report.exact == 2
    json.dumps(report.as_dict())


def test_evaluate_takes_plain_dicts_and_skips_targets_without_specs() -> None:
    cases = [
        {"text": "big", "target": "question", "key_points": ["big"], "wrong_answer": None},
        {"text": "x", "target": "follow-up:9", "key_points": [], "wrong_answer": None},
        {"text": "hot", "target": "follow-up:1", "key_points": ["hot"], "wrong_answer": None},
    ]
    specs = {"question": TOY, follow_up_target(1): TargetSpecs(POINTS)}
    report = evaluate(cases, specs)
    assert report.cases == 2 and report.misjudged == []
    # Follow-ups have no wrong answers, so they do not count towards the accuracy.
    assert report.wrong_answer_cases == 1
    assert {(s.target, s.slug) for s in report.key_points} == {
        ("question", "big"),
        ("question", "hot"),
        ("follow-up:1", "big"),
        ("follow-up:1", "hot"),
    }


def test_evaluate_an_empty_list() -> None:
    report = evaluate([], TOY)
    assert report.cases == 0 and report.key_point_micro_f1 == 1.0
    assert report.as_dict()["misjudged"] == []


def test_a_bad_eval_line_names_its_file_and_line() -> None:
    with pytest.raises(ValueError, match=r"x.jsonl:2: fields must be exactly"):
        eval_cases_parse('\n{"text": "t"}\n', source="x.jsonl")


# --- The labelled set ----------------------------------------------------------------------


def _question_targets(slug: str) -> dict[str, tuple[set[str], set[str]]]:
    data = content_bundle().question(slug)
    targets = {
        "question": (
            {k["slug"] for k in data["key_points"]},
            {w["slug"] for w in data["wrong_answers"]},
        )
    }
    for index, fu in enumerate(data["follow_ups"]):
        if fu["check_kind"] == "text":
            targets[follow_up_target(index)] = ({k["slug"] for k in fu["key_points"]}, set())
    return targets


def test_every_line_has_exactly_the_agreed_fields() -> None:
    ids: set[str] = set()
    for path in sorted(EVAL_DIR.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            data = json.loads(line)
            assert set(data) == EVAL_FIELDS
            assert data["register"] in REGISTERS and data["split"] in SPLITS
            assert data["id"] not in ids
            ids.add(data["id"])


# A question authored by meaning (sentences and labelled examples, no pattern) has a smaller
# set: its `dev` lines are the example answers an instructor labels (about 20), and its
# held-out ones, written before any tuning and never used as examples, measure it.
MEANING_QUESTIONS = ("does-the-scale-change-the-winner",)
MEANING_MIN_EXAMPLES = 20
MEANING_MIN_PER_KEY_POINT = 5
MEANING_MIN_PER_WRONG_ANSWER = 3
MEANING_MIN_HELDOUT = 40


@pytest.mark.parametrize("slug", MEANING_QUESTIONS)
def test_a_question_authored_by_meaning_has_examples_and_a_blind_set(slug: str) -> None:
    data = content_bundle().question(slug)
    assert not any(k["patterns"].strip() for k in data["key_points"])
    assert not any(w.get("patterns", "").strip() for w in data["wrong_answers"])
    cases = [c for c in eval_set_read()[slug] if c.target == "question"]
    dev = [c for c in cases if c.split == "dev"]
    assert len(dev) >= MEANING_MIN_EXAMPLES
    points = Counter(k for c in dev for k in c.key_points)
    wrongs = Counter(c.wrong_answer for c in dev if c.wrong_answer)
    assert all(points[k["slug"]] >= MEANING_MIN_PER_KEY_POINT for k in data["key_points"])
    assert all(wrongs[w["slug"]] >= MEANING_MIN_PER_WRONG_ANSWER for w in data["wrong_answers"])
    held = [c for c in cases if c.split == "heldout"]
    assert len(held) >= MEANING_MIN_HELDOUT
    assert {c.register for c in held} >= {"refutation", "stuffing", "off-topic", "paraphrase"}
    assert not {c.text for c in held} & {c.text for c in dev}


@pytest.mark.parametrize("slug", sorted(set(eval_set_read()) - set(MEANING_QUESTIONS)))
def test_the_set_covers_every_free_text_target(slug: str) -> None:
    cases = eval_set_read()[slug]
    targets = _question_targets(slug)
    assert set(targets) == {c.target for c in cases}, "every free-text target has answers"
    for target, (points, wrongs) in targets.items():
        chosen = [c for c in cases if c.target == target]
        point_counts = Counter(k for c in chosen for k in c.key_points)
        wrong_counts = Counter(c.wrong_answer for c in chosen if c.wrong_answer)
        assert set(point_counts) <= points and set(wrong_counts) <= wrongs
        for point in points:
            assert point_counts[point] >= MIN_PER_KEY_POINT, (target, point)
        for wrong in wrongs:
            assert wrong_counts[wrong] >= MIN_PER_WRONG_ANSWER, (target, wrong)
        # A third was held out, at random by register, before any tuning; the answers written
        # after tuning (to probe it) are all dev, so the held-out share is now lower.
        held = sum(c.split == "heldout" for c in chosen)
        assert held >= 15 and 0.15 <= held / len(chosen) <= 0.4
        registers = Counter(c.register for c in chosen)
        for register in ("refutation", "stuffing", "off-topic", "paraphrase"):
            if target == "question":
                assert registers[register] >= 1, (target, register)


def test_refutations_and_stuffing_are_labelled_as_such() -> None:
    for cases in eval_set_read().values():
        for case in cases:
            if case.register == "refutation":
                assert case.wrong_answer is None, case.id
            if case.register in ("stuffing", "off-topic"):
                assert case.key_points == () and case.wrong_answer is None, case.id


# --- The command on the seeded database ------------------------------------------------------


def run(*args: str) -> str:
    out = StringIO()
    call_command("assess_eval", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_the_command_prints_each_split(seed_content: None) -> None:
    out = run("--question", MAIN, "--split", "heldout")
    assert "== heldout: all questions" in out and f"== heldout: {MAIN}" in out
    assert "== dev" not in out
    assert "false rebuttals" in out and "question/variance-grows" in out


@pytest.mark.django_db
def test_the_command_rejects_an_unknown_question(seed_content: None) -> None:
    with pytest.raises(CommandError, match="No evaluation file"):
        run("--question", "no-such-question")


def _combined(questions: dict[str, dict], slugs: set[str]) -> dict[str, float]:
    """The figures over several questions at once, from each one's counts."""
    rows = [row for slug in slugs for row in questions[slug]["key_points"]]
    tp, fp, fn = (sum(row[k] for row in rows) for k in ("tp", "fp", "fn"))
    cases = sum(questions[slug]["wrong_answer_cases"] for slug in slugs)
    correct = sum(
        round(questions[slug]["wrong_answer_accuracy"] * questions[slug]["wrong_answer_cases"])
        for slug in slugs
    )
    # Rounded as the command prints them, which is what the floors were set on.
    return {
        "key_point_micro_f1": round(2 * tp / (2 * tp + fp + fn), 3),
        "wrong_answer_accuracy": round(correct / cases, 3),
        "false_rebuttals": sum(questions[slug]["false_rebuttals"] for slug in slugs),
    }


@pytest.mark.django_db
@pytest.mark.parametrize("split", SPLITS)
def test_figures_stay_above_their_floors(seed_content: None, split: str) -> None:
    """What candidates get: the questions as the database holds them. The questions authored
    with patterns together (those authored by meaning have floors of their own)."""
    output = run("--json", "--split", split, "--exclude-id-prefix", MAIN_WRONG_ANSWERS_PREFIX)
    questions = json.loads(output)[split]["questions"]
    data = {**_combined(questions, set(questions) - set(MEANING_QUESTIONS)), "questions": questions}
    floor = FLOORS[split]
    assert data["key_point_micro_f1"] >= floor["key_point_micro_f1"]
    assert data["wrong_answer_accuracy"] >= floor["wrong_answer_accuracy"]
    assert data["false_rebuttals"] <= floor["false_rebuttals"]
    main = data["questions"][MAIN]
    main_floor = MAIN_FLOORS[split]
    assert main["key_point_micro_f1"] >= main_floor["key_point_micro_f1"]
    assert main["wrong_answer_accuracy"] >= main_floor["wrong_answer_accuracy"]
    assert main["false_rebuttals"] <= main_floor["false_rebuttals"]
    assert set(data["questions"]) == set(eval_set_read())


# The questions added after the first three, each on its own: floors just under the figures
# measured when their rules were written. Their held-out answers were written before the
# rules were tuned, by the rules' author (so not blind), and were never tuned on.
NEW_QUESTIONS = (
    "which-dimension-in-multi-head",
    "why-root-dk-not-dk",
    "what-flashattention-changes",
    "is-the-scale-ever-different",
    "why-scale-at-initialisation",
    "incident-loss-flattens",
)
NEW_FLOORS = {
    "dev": {"key_point_micro_f1": 0.98, "wrong_answer_accuracy": 0.96, "false_rebuttals": 0},
    "heldout": {"key_point_micro_f1": 0.95, "wrong_answer_accuracy": 0.85, "false_rebuttals": 0},
}


@pytest.mark.django_db
@pytest.mark.parametrize("split", SPLITS)
def test_each_new_question_stays_above_its_floors(seed_content: None, split: str) -> None:
    questions = json.loads(run("--json", "--split", split))[split]["questions"]
    floor = NEW_FLOORS[split]
    for slug in NEW_QUESTIONS:
        figures = questions[slug]
        assert figures["key_point_micro_f1"] >= floor["key_point_micro_f1"], slug
        assert figures["wrong_answer_accuracy"] >= floor["wrong_answer_accuracy"], slug
        assert figures["false_rebuttals"] <= floor["false_rebuttals"], slug


# The last batch of answers, by an author who never saw the rules, kept out of all tuning.
BLIND_PREFIX = "fresh4-"
BLIND_FLOOR = {"key_point_micro_f1": 0.9, "wrong_answer_accuracy": 0.9, "false_rebuttals": 0}


@pytest.mark.django_db
def test_the_blind_batch_is_selected_by_its_prefix_and_holds_the_issue_targets(
    seed_content: None,
) -> None:
    data = json.loads(run("--json", "--split", "heldout", "--id-prefix", BLIND_PREFIX))
    blind = data["heldout"]
    assert blind["cases"] == 85
    assert blind["key_point_micro_f1"] >= BLIND_FLOOR["key_point_micro_f1"]
    assert blind["wrong_answer_accuracy"] >= BLIND_FLOOR["wrong_answer_accuracy"]
    assert blind["false_rebuttals"] <= BLIND_FLOOR["false_rebuttals"]


# Its held-out answers come in batches, each with floors just under the figures measured:
# the first 40, written before the reader was tuned but looked at while tuning it; then two
# measured blind before the reader changed: 30 by the same hand, then 40 by an author who read
# only the question, its key points and its wrong answers.
MEANING_BATCHES = {
    "winner-h": (
        40,
        {"key_point_micro_f1": 0.84, "wrong_answer_accuracy": 0.7, "false_rebuttals": 1},
    ),
    "winner-b": (
        30,
        {"key_point_micro_f1": 0.6, "wrong_answer_accuracy": 0.6, "false_rebuttals": 0},
    ),
    "winner-c": (
        40,
        {"key_point_micro_f1": 0.75, "wrong_answer_accuracy": 0.75, "false_rebuttals": 0},
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize("batch", sorted(MEANING_BATCHES))
def test_the_question_authored_by_meaning_holds_its_figures(seed_content: None, batch: str) -> None:
    slug = MEANING_QUESTIONS[0]
    cases, floors = MEANING_BATCHES[batch]
    output = run("--json", "--split", "heldout", "--question", slug, "--id-prefix", batch)
    figures = json.loads(output)["heldout"]["questions"][slug]
    assert figures["cases"] == cases
    assert figures["key_point_micro_f1"] >= floors["key_point_micro_f1"]
    assert figures["wrong_answer_accuracy"] >= floors["wrong_answer_accuracy"]
    assert figures["false_rebuttals"] <= floors["false_rebuttals"]
    # Its evidence names the example or sentence each verdict resembled.
    vias = {e["via"] for m in figures["misjudged"] for e in m["evidence"]}
    assert vias <= {"meaning"}


# The main question's later wrong answers (the scale from the sequence length, fp16 overflow,
# a scale-invariant softmax): their answers joined the set after its floors were set, so the
# floors above hold the set as it was and these hold the new answers (held out: written
# before the patterns, never tuned on).
MAIN_WRONG_ANSWERS_PREFIX = "wdbs-wa-"
MAIN_WRONG_ANSWERS_FLOOR = {"wrong_answer_accuracy": 0.8, "false_rebuttals": 0}


@pytest.mark.django_db
def test_the_main_questions_later_wrong_answers_hold_their_figures(seed_content: None) -> None:
    output = run(
        "--json", "--split", "heldout", "--question", MAIN, "--id-prefix", MAIN_WRONG_ANSWERS_PREFIX
    )
    figures = json.loads(output)["heldout"]["questions"][MAIN]
    assert figures["cases"] == 16
    assert figures["wrong_answer_accuracy"] >= MAIN_WRONG_ANSWERS_FLOOR["wrong_answer_accuracy"]
    assert figures["false_rebuttals"] <= MAIN_WRONG_ANSWERS_FLOOR["false_rebuttals"]
