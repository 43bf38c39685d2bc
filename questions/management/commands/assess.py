"""`manage.py assess SLUG --text "..." [--json]`: the web's assessment, from the shell."""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import Http404

from questions import selectors, services

UNKNOWN_QUESTION = "Unknown question slug: {slug}"


class Command(BaseCommand):
    help = "Assess an answer to a question with the same code as the web page (nothing is stored)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="Question slug, e.g. why-divide-before-softmax")
        parser.add_argument("--text", required=True, help="The answer to assess.")
        parser.add_argument(
            "--json",
            action="store_true",
            help='Print one line: {"key_points": [...], "wrong_answer": ..., "score": ...}',
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            # Instructors check drafts too, before publishing them.
            question = selectors.question_get(slug=options["slug"], include_drafts=True)
        except Http404 as exc:
            raise CommandError(UNKNOWN_QUESTION.format(slug=options["slug"])) from exc
        try:
            text = services.answer_text_clean(options["text"])
        except ValidationError as exc:
            raise CommandError(exc.messages[0]) from exc
        result = services.question_assess(question=question, text=text)
        if options["json"]:
            self.stdout.write(json.dumps(result.summary()))
            return
        labels = {kp.slug: kp.label for kp in question.key_points.filter(follow_up__isnull=True)}
        self.stdout.write(f"Score: {result.score}")
        for slug in result.key_points:
            self.stdout.write(f"  covered  {slug}: {labels.get(slug, '')}")
        for slug in result.missed:
            self.stdout.write(f"  missing  {slug}: {labels.get(slug, '')}")
        self.stdout.write(f"Wrong answer: {result.wrong_answer or 'none'}")
