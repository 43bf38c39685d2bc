"""Synchronise the courses' rosters from their platforms (names and roles service)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from lti import services
from lti.models import CourseContext
from lti.services import roster_sync


class Command(BaseCommand):
    help = "Enrol each LTI course's active members from its platform; --course SLUG for one."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--course", help="the course's slug (default: every LTI course)")

    def handle(self, *args: Any, **options: Any) -> None:
        links = CourseContext.objects.select_related("course")
        if options["course"]:
            links = links.filter(course__slug=options["course"])
        failed = 0
        for link in links:
            try:
                done = roster_sync(course_context_id=link.pk)
            except services.PLATFORM_ERRORS as error:
                failed += 1
                self.stderr.write(f"{link.course.slug}: {error}")
                continue
            self.stdout.write(
                f"{link.course.slug}: {done.enrolled} enrolled, {done.skipped} skipped"
            )
        if failed:
            raise SystemExit(1)
