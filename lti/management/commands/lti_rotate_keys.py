"""Rotate the tool's signing key without downtime (run it, say, monthly from cron)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from lti.services import key_rotate


class Command(BaseCommand):
    help = (
        "Create a new signing key, published at once next to the previous one; retire keys "
        "whose successor has been published for --retire-after-days."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--retire-after-days", type=int, default=7)

    def handle(self, *args: Any, **options: Any) -> None:
        done = key_rotate(retire_after=timedelta(days=options["retire_after_days"]))
        self.stdout.write(f"Created key {done.created}; retired {done.retired}.")
