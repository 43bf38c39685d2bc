"""`manage.py load_content [--update]`: load questions/content/*.md into the database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError, CommandParser

from questions.content_files import CONTENT_DIR, ContentError
from questions.content_loading import content_load
from questions.example_answers import example_answers_load

NOTHING_TO_CREATE = "Nothing to create: every role, question and page of the files is loaded."
NOTHING_TO_UPDATE = "Nothing to update: the seeded rows match the files."
STALE_HINT = (
    "{count} seeded row(s) differ from the files (edited in the admin, or in a file since). "
    "`manage.py load_content --update` overwrites them from the files:"
)
EXTRA_NOTE = "Left alone (in the database, not in the files):"
EXAMPLES_CREATED = "Created {count} example answer(s) from the dev lines of questions/eval/."


class Command(BaseCommand):
    help = (
        "Create the roles, questions and pages of questions/content/ that are missing. "
        "Idempotent; with --update, also overwrite the seeded rows from the files."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--update",
            action="store_true",
            help="Overwrite the fields of the seeded rows from the files (instructor edits "
            "to those rows are lost) and add the key points, follow-ups and wrong answers "
            "added to the files.",
        )
        parser.add_argument(
            "--directory",
            type=Path,
            default=CONTENT_DIR,
            help="Content directory (default: questions/content).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = content_load(
                apps, update=options["update"], compare=True, directory=options["directory"]
            )
            # After the questions exist: a database migrated before the evaluation files
            # appeared gets its example answers here (only what is missing, dev lines only).
            examples = example_answers_load(apps)
        except (ContentError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if examples:
            self.stdout.write(EXAMPLES_CREATED.format(count=examples))
        for line in report.created + report.updated:
            self.stdout.write(line)
        if not report.created:
            self.stdout.write(NOTHING_TO_CREATE)
        if options["update"] and not report.updated:
            self.stdout.write(NOTHING_TO_UPDATE)
        if report.stale:
            self.stdout.write(STALE_HINT.format(count=len(report.stale)))
            for line in report.stale:
                self.stdout.write(f"  {line}")
        if report.extra:
            self.stdout.write(EXTRA_NOTE)
            for line in report.extra:
                self.stdout.write(f"  {line}")
