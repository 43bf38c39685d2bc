"""Example answers: seeded from the evaluation set's dev lines, judged by question_validate."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.apps import apps
from django.core.exceptions import ValidationError

from questions import services
from questions.example_answers import (
    EVAL_DIR,
    eval_files,
    eval_lines_parse,
    example_answers_load,
)
from questions.models import ExampleAnswer, Question

FIXTURES = Path(__file__).parent / "fixtures" / "eval"

pytestmark = pytest.mark.django_db


@pytest.fixture
def examples(question: Question) -> list[ExampleAnswer]:
    """The fixture file's dev lines, instead of whatever the real evaluation set holds."""
    ExampleAnswer.objects.all().delete()
    example_answers_load(apps, directory=FIXTURES)
    return list(question.example_answers.all())


def test_parse_reads_targets_and_rejects_bad_lines() -> None:
    lines = eval_lines_parse((FIXTURES / "why-divide-before-softmax.jsonl").read_text())
    assert [line.id for line in lines][:3] == ["fx-dev-1", "fx-dev-2", "fx-dev-3"]
    assert lines[0].follow_up_ordering is None and lines[0].wrong_answer == ""
    assert lines[2].wrong_answer == "larger-learning-rate"
    assert next(line for line in lines if line.id == "fx-dev-4").follow_up_ordering == 1
    with pytest.raises(ValueError, match=r"x\.jsonl:2: not an evaluation line"):
        eval_lines_parse('{"id": "a", "text": "t"}\n{"id": "b"}\n', source="x.jsonl")
    with pytest.raises(ValueError, match="unknown target"):
        eval_lines_parse('{"id": "a", "text": "t", "target": "footnote"}')


def test_missing_directory_loads_nothing(tmp_path: Path, question: Question) -> None:
    assert eval_files(tmp_path / "absent") == {}
    assert example_answers_load(apps, directory=tmp_path / "absent") == 0


def test_only_dev_lines_are_loaded_once(question: Question, examples: list[ExampleAnswer]) -> None:
    texts = [e.text for e in examples]
    assert len(examples) == 4  # 4 dev lines for existing targets; heldout and orphans skipped
    assert not any("held-out" in t for t in texts)
    first = examples[0]
    assert first.expected_key_points[0] == "variance-grows"
    assert first.note == "Evaluation set fx-dev-1, textbook"
    follow_up = next(e for e in examples if e.follow_up_id)
    assert follow_up.follow_up == question.follow_ups.order_by("ordering", "id")[1]
    assert examples[2].expected_wrong_answer == "larger-learning-rate"
    # idempotent: an instructor's edit and a reload leave one row per line
    first.note = "edited by an instructor"
    first.save()
    assert example_answers_load(apps, directory=FIXTURES) == 0
    assert question.example_answers.count() == 4
    assert question.example_answers.get(pk=first.pk).note == "edited by an instructor"


def test_the_migration_seeds_the_real_dev_lines(question: Question) -> None:
    """Whatever the evaluation set holds, only its dev lines are in the database."""
    files = eval_files(EVAL_DIR)
    dev_texts = {line.text for line in files.get(question.slug, []) if line.split == "dev"}
    heldout = {line.text for line in files.get(question.slug, []) if line.split == "heldout"}
    stored = set(question.example_answers.values_list("text", flat=True))
    assert dev_texts <= stored
    assert not (heldout & stored)


def test_model_refuses_a_follow_up_of_another_question(question: Question) -> None:
    other = Question.objects.exclude(pk=question.pk).filter(follow_ups__isnull=False).first()
    example = ExampleAnswer(question=question, follow_up=other.follow_ups.first(), text="t")
    with pytest.raises(ValidationError) as exc:
        example.clean()
    assert "follow_up" in exc.value.message_dict
    example = ExampleAnswer(
        question=question,
        follow_up=question.follow_ups.first(),
        text="t",
        expected_wrong_answer="divide-by-dk",
    )
    with pytest.raises(ValidationError) as exc:
        example.clean()
    assert "expected_wrong_answer" in exc.value.message_dict


def test_validate_judges_every_example(question: Question, examples: list[ExampleAnswer]) -> None:
    report = services.question_validate(question=question)
    assert [v.example.pk for v in report.verdicts] == [e.pk for e in examples]
    by_note = {v.example.note.split(",")[0]: v for v in report.verdicts}
    terse = by_note["Evaluation set fx-dev-2"]
    # "Softmax saturates." says nothing of gradients: the expectation is deliberately wrong
    assert "gradients-vanish" in terse.missed_key_points
    assert not terse.right
    learning_rate = by_note["Evaluation set fx-dev-3"]
    assert learning_rate.got_wrong_answer == "larger-learning-rate"
    assert learning_rate.wrong_answer_right
    assert any(e.slug == "larger-learning-rate" and e.rules for e in learning_rate.counted)
    follow_up = by_note["Evaluation set fx-dev-4"]
    assert set(follow_up.got_key_points) <= {"fu-saturates", "fu-tiny-gradients", "fu-no-error"}
    assert follow_up.got_wrong_answer == ""

    scores = {(r.score.target, r.score.slug): r for r in report.key_point_scores}
    gradients = scores[("question", "gradients-vanish")]
    assert gradients.score.fn >= 1
    assert gradients.score.support == 2
    assert gradients.label.startswith("The softmax gradient")
    assert ("follow-up:1", "fu-no-error") in scores
    wrong = {r.score.slug for r in report.wrong_answer_scores}
    assert wrong == set(question.wrong_answers.values_list("slug", flat=True))
    assert report.right_count == sum(v.right for v in report.verdicts)
    assert report.false_rebuttals == sum(v.false_rebuttal for v in report.verdicts)
    assert report.wrong_answer_accuracy == report.report.wrong_answer_accuracy


def test_validate_agrees_with_assess_eval_on_the_same_answers(
    question: Question, examples: list[ExampleAnswer]
) -> None:
    """The admin's figures are assessment_eval's: the command and Validate cannot disagree."""
    from questions.assessment_eval import EvalCase, TargetSpecs, evaluate

    report = services.question_validate(question=question)
    specs = {"question": TargetSpecs(question.key_point_specs(), question.wrong_answer_specs())}
    for fu in question.follow_ups.filter(check_kind="text"):
        specs[f"follow-up:{fu.ordering}"] = TargetSpecs(fu.key_point_specs())
    cases = [
        EvalCase(
            text=e.text,
            target="question" if e.follow_up is None else f"follow-up:{e.follow_up.ordering}",
            key_points=tuple(e.expected_key_points),
            wrong_answer=e.expected_wrong_answer or None,
        )
        for e in examples
    ]
    direct = evaluate(cases, specs)
    assert report.report.as_dict()["key_point_micro_f1"] == direct.as_dict()["key_point_micro_f1"]
    assert report.right_count == direct.exact
    assert report.false_rebuttals == direct.false_rebuttals


def test_examples_of_a_non_text_follow_up_are_listed_as_skipped(question: Question) -> None:
    shape = question.follow_ups.exclude(check_kind="text").first()
    ExampleAnswer.objects.create(question=question, follow_up=shape, text="(n, n)")
    report = services.question_validate(question=question)
    assert [e.text for e in report.skipped] == ["(n, n)"]
    assert all(v.example.follow_up_id != shape.pk for v in report.verdicts)


def test_load_content_adds_the_examples_a_database_lacks(question: Question) -> None:
    from io import StringIO

    from django.core.management import call_command

    from questions.management.commands.load_content import EXAMPLES_CREATED

    ExampleAnswer.objects.all().delete()
    out = StringIO()
    call_command("load_content", stdout=out)
    count = ExampleAnswer.objects.count()
    assert count > 0
    assert EXAMPLES_CREATED.format(count=count) in out.getvalue()
    again = StringIO()
    call_command("load_content", stdout=again)
    assert ExampleAnswer.objects.count() == count
    assert "example answer" not in again.getvalue()


def _counting_assessor(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The real assessor, with the texts it was asked to read recorded."""
    read: list[str] = []
    assess = services.assessment.assess_text

    def counting(text, *specs):  # type: ignore[no-untyped-def]
        read.append(text)
        return assess(text, *specs)

    monkeypatch.setattr(services.assessment, "assess_text", counting)
    return read


def test_validate_remembers_its_results_until_an_example_changes(
    question: Question, examples: list[ExampleAnswer], monkeypatch: pytest.MonkeyPatch
) -> None:
    read = _counting_assessor(monkeypatch)
    first = services.question_validate(question=question)
    assert len(read) == len(first.verdicts)
    again = services.question_validate(question=question)
    assert len(read) == len(first.verdicts)  # nothing read twice
    assert again.verdicts == first.verdicts and again.report == first.report
    changed = examples[0]
    changed.text += " Also, the softmax saturates."
    changed.save()
    services.question_validate(question=question)
    assert len(read) == 2 * len(first.verdicts)


def test_validate_works_with_the_cache_down(
    question: Question, examples: list[ExampleAnswer], monkeypatch: pytest.MonkeyPatch
) -> None:
    def down(*args: object, **kwargs: object) -> None:
        raise ConnectionError("the cache is down")

    monkeypatch.setattr(services.cache, "get", down)
    monkeypatch.setattr(services.cache, "set", down)
    report = services.question_validate(question=question)
    assert [v.example.pk for v in report.verdicts] == [e.pk for e in examples]
