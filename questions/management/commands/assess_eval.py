"""`manage.py assess_eval [--split dev|heldout|all] [--json] [--question SLUG]`.

Runs the assessor on the labelled evaluation set (`questions/eval/<question-slug>.jsonl`)
against the questions as they are in the database, so it measures what candidates get, and
prints per key point and per wrong answer precision, recall and F1, the key-point micro F1,
the wrong-answer accuracy and the false-rebuttal count, for each split.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from questions.assessment_eval import (
    EVAL_DIR,
    SPLITS,
    EvalReport,
    TargetSpecs,
    eval_set_read,
    evaluate_questions,
    report_lines,
)
from questions.models import Question
from questions.selectors import question_target_specs

NO_EVAL_FILE = "No evaluation file for {slug} in {directory}."
NO_QUESTIONS = "None of the evaluation set's questions is in the database; run migrate first."


def question_specs(question: Question) -> dict[str, TargetSpecs]:
    """What each target of a question is assessed with, as the web assesses it."""
    return question_target_specs(question=question)


def _misjudged_lines(report: EvalReport) -> list[str]:
    lines = []
    for item in report.misjudged:
        wrong = ""
        if item.expected_wrong_answer != item.got_wrong_answer:
            wrong = f" wrong answer {item.expected_wrong_answer} -> {item.got_wrong_answer}"
        lines.append(
            f"  ! {item.case.id} [{item.case.register}] missing {list(item.missing)} "
            f"extra {list(item.extra)}{wrong}: {item.case.text[:120]!r}"
        )
        for evidence in item.evidence:
            if evidence.slug in item.extra or evidence.slug == item.got_wrong_answer:
                lines.append(f"      {evidence.slug} ({evidence.stance}): {evidence.sentence!r}")
    return lines


class Command(BaseCommand):
    help = "Measure the free-text assessor on the labelled evaluation set (nothing is stored)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--split", choices=[*SPLITS, "all"], default="all")
        parser.add_argument("--json", action="store_true", help="Print one JSON document.")
        parser.add_argument("--question", metavar="SLUG", help="Only this question.")
        parser.add_argument(
            "--show-misjudged", action="store_true", help="List every misjudged answer."
        )
        parser.add_argument(
            "--id-prefix",
            metavar="PREFIX",
            default="",
            help="Only the answers whose id starts with PREFIX: one author's batch, e.g. "
            "fresh4- (the last batch, written by an author who never saw the rules).",
        )
        parser.add_argument(
            "--exclude-id-prefix",
            metavar="PREFIX",
            default="",
            help="Leave out the answers whose id starts with PREFIX: a set as it was before a "
            "batch joined it.",
        )
        parser.add_argument("--directory", type=Path, default=EVAL_DIR, help=argparse.SUPPRESS)

    def handle(self, *args: Any, **options: Any) -> None:
        directory: Path = options["directory"]
        cases = eval_set_read(directory)
        slug = options["question"]
        if slug:
            if slug not in cases:
                raise CommandError(NO_EVAL_FILE.format(slug=slug, directory=directory))
            cases = {slug: cases[slug]}
        if options["id_prefix"]:
            cases = {
                q: [c for c in items if c.id.startswith(options["id_prefix"])]
                for q, items in cases.items()
            }
        if options["exclude_id_prefix"]:
            cases = {
                q: [c for c in items if not c.id.startswith(options["exclude_id_prefix"])]
                for q, items in cases.items()
            }
        questions = Question.objects.filter(slug__in=list(cases))
        if not slug:
            # Without --question, what candidates get: the published questions.
            questions = questions.published()
        specs = {q.slug: question_specs(q) for q in questions.prefetch_related("follow_ups")}
        if not specs:
            raise CommandError(NO_QUESTIONS)
        splits = list(SPLITS) if options["split"] == "all" else [options["split"]]
        documents: dict[str, object] = {}
        for split in splits:
            total, per_question = evaluate_questions(cases, specs, split=split)
            if options["json"]:
                documents[split] = {
                    **total.as_dict(),
                    "questions": {k: v.as_dict() for k, v in per_question.items()},
                }
                continue
            self.stdout.write("\n".join(report_lines(total, title=f"== {split}: all questions")))
            for question_slug, report in per_question.items():
                self.stdout.write("")
                self.stdout.write(
                    "\n".join(report_lines(report, title=f"== {split}: {question_slug}"))
                )
                if options["show_misjudged"]:
                    self.stdout.write("\n".join(_misjudged_lines(report)))
            self.stdout.write("")
        if options["json"]:
            self.stdout.write(json.dumps(documents))
