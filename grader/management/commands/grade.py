"""`manage.py grade EXERCISE_SLUG FILE [FILE ...] --json`: grade files as the workers do.

The path is the workers': ``exercise_spec_get`` then ``grade()`` through one warm
``SandboxExecutor`` (started and self-checked once, reused for every file). One JSON object per
line per file with ``--json``; exit status 0 whenever verdicts were printed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from grader.engine.grading import Verdict, grade
from grader.engine.limits import CODE_MAX_BYTES
from grader.engine.status import VerdictStatus
from grader.models import Exercise
from grader.selectors.exercises import exercise_get_by_slug, exercise_spec_get

MSG_UNREADABLE = "The file could not be read as UTF-8 text: {error}"
MSG_TOO_LARGE = f"The file is larger than {CODE_MAX_BYTES // 1024} KiB."
# An internal error is retried as a worker would (the sandbox restarts its zygote in between).
INTERNAL_RETRIES = 2


def verdict_line(path: str, verdict: Verdict) -> dict[str, Any]:
    """The command-line contract: file, status, score, checks (name, passed, message), ..."""
    data = verdict.to_dict()
    return {
        "file": path,
        "status": data["status"],
        "score": data["score"],
        "checks": [
            {"name": c["name"], "passed": c["passed"], "message": c["message"]}
            for c in data["checks"]
        ],
        "diagnosis": data["diagnosis"],
        "message": data["message"],
    }


class Command(BaseCommand):
    help = "Grade Python files for an exercise through the sandbox, one verdict per file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("exercise_slug")
        parser.add_argument("files", nargs="+")
        parser.add_argument("--json", action="store_true", help="One JSON object per line.")
        parser.add_argument(
            "--seed", type=int, default=0, help="Seed of the hidden inputs (default 0)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            exercise = exercise_get_by_slug(slug=options["exercise_slug"])
        except Exercise.DoesNotExist:
            raise CommandError(f"No exercise with slug {options['exercise_slug']!r}.") from None
        spec = exercise_spec_get(exercise=exercise)

        from grader.engine.sandbox import SandboxExecutor

        try:
            executor = SandboxExecutor(allow_no_landlock=settings.SANDBOX_ALLOW_NO_LANDLOCK)
            executor.self_check()
        except Exception as exc:
            raise CommandError(f"The sandbox could not start: {exc}") from exc
        try:
            for path in options["files"]:
                verdict = self._grade_file(path, spec, options["seed"], executor)
                self._print(path, verdict, as_json=options["json"])
        finally:
            executor.close()

    def _grade_file(self, path: str, spec: Any, seed: int, executor: Any) -> Verdict:
        try:
            raw = Path(path).read_bytes()
            code = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return Verdict(
                status=VerdictStatus.ERROR, score=0.0, message=MSG_UNREADABLE.format(error=exc)
            )
        if len(raw) > CODE_MAX_BYTES:
            return Verdict(status=VerdictStatus.ERROR, score=0.0, message=MSG_TOO_LARGE)
        verdict = grade(spec=spec, code=code, seed=seed, executor=executor)
        for _ in range(INTERNAL_RETRIES):
            if verdict.status != VerdictStatus.INTERNAL_ERROR:
                break
            verdict = grade(spec=spec, code=code, seed=seed, executor=executor)
        return verdict

    def _print(self, path: str, verdict: Verdict, *, as_json: bool) -> None:
        line = verdict_line(path, verdict)
        if as_json:
            self.stdout.write(json.dumps(line, ensure_ascii=False))
            self.stdout.flush()
            return
        self.stdout.write(f"{path}: {line['status']} (score {line['score']:.2f}) {line['message']}")
        for check in line["checks"]:
            mark = "ok  " if check["passed"] else "FAIL"
            self.stdout.write(f"  {mark} {check['name']}: {check['message']}")
        for code in line["diagnosis"]:
            self.stdout.write(f"  misconception: {code}")
