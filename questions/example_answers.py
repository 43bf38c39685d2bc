"""Seed the instructors' example answers from the evaluation set's `dev` lines.

The evaluation set lives in `questions/eval/<question-slug>.jsonl`, one labelled answer per
line:

    {"id": "...", "target": "question" | "follow-up:<0-based ordering>", "text": "...",
     "key_points": ["slug", ...], "wrong_answer": "slug" | null, "register": "terse",
     "split": "dev" | "heldout"}

Only `dev` lines become example answers: the `heldout` ones measure the assessor on answers
nobody tuned it on, so they must never be shown in the admin where patterns get tuned.

`example_answers_load` takes an app registry (a migration's historical models or
django.apps.apps), like `content_load`, and only creates what is missing, so instructors'
own examples and edits survive a reload.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EVAL_DIR = Path(__file__).resolve().parent / "eval"
DEV_SPLIT = "dev"
QUESTION_TARGET = "question"
FOLLOW_UP_TARGET_PREFIX = "follow-up:"

BAD_LINE = "{path}:{line}: not an evaluation line ({error})."


@dataclass(frozen=True)
class EvalLine:
    """One labelled answer of the evaluation set."""

    id: str
    follow_up_ordering: int | None  # None: an answer to the question itself
    text: str
    key_points: tuple[str, ...]
    wrong_answer: str  # "" for none
    register: str
    split: str

    @property
    def note(self) -> str:
        register = f", {self.register}" if self.register else ""
        return f"Evaluation set {self.id}{register}"


def _target(raw: str) -> int | None:
    if raw == QUESTION_TARGET:
        return None
    if raw.startswith(FOLLOW_UP_TARGET_PREFIX):
        return int(raw.removeprefix(FOLLOW_UP_TARGET_PREFIX))
    raise ValueError(f"unknown target {raw!r}")


def eval_lines_parse(text: str, *, source: str = "<text>") -> list[EvalLine]:
    """Every line of one .jsonl file. Raises ValueError naming the file and line."""
    lines: list[EvalLine] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            data: dict[str, Any] = json.loads(raw)
            lines.append(
                EvalLine(
                    id=str(data["id"]),
                    follow_up_ordering=_target(str(data.get("target", QUESTION_TARGET))),
                    text=str(data["text"]),
                    key_points=tuple(str(s) for s in data.get("key_points") or ()),
                    wrong_answer=str(data.get("wrong_answer") or ""),
                    register=str(data.get("register") or ""),
                    split=str(data.get("split") or ""),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(BAD_LINE.format(path=source, line=number, error=exc)) from exc
    return lines


def eval_files(directory: Path = EVAL_DIR) -> dict[str, list[EvalLine]]:
    """Question slug -> its evaluation lines; empty when the directory is absent."""
    if not directory.is_dir():
        return {}
    return {
        path.stem: eval_lines_parse(path.read_text(encoding="utf-8"), source=str(path))
        for path in sorted(directory.glob("*.jsonl"))
    }


def example_answers_load(apps: Any, *, directory: Path = EVAL_DIR, split: str = DEV_SPLIT) -> int:
    """Create the missing example answers of one split; returns how many were created.

    Lines for a question or follow-up that does not exist are skipped: the evaluation set may
    run ahead of the content, and a missing question is the content loader's business.
    """
    Question = apps.get_model("questions", "Question")
    ExampleAnswer = apps.get_model("questions", "ExampleAnswer")
    created = 0
    for slug, lines in eval_files(directory).items():
        question = Question.objects.filter(slug=slug).first()
        if question is None:
            continue
        follow_ups = list(question.follow_ups.order_by("ordering", "id"))
        by_ordering = {fu.ordering: fu for fu in follow_ups}
        existing = set(
            ExampleAnswer.objects.filter(question=question).values_list("follow_up_id", "text")
        )
        next_ordering = ExampleAnswer.objects.filter(question=question).count()
        for line in lines:
            if line.split != split:
                continue
            follow_up = None
            if line.follow_up_ordering is not None:
                # The ordering field first; the position as a fallback for hand-made content.
                follow_up = by_ordering.get(line.follow_up_ordering)
                if follow_up is None and line.follow_up_ordering < len(follow_ups):
                    follow_up = follow_ups[line.follow_up_ordering]
                if follow_up is None:
                    continue
            key = (follow_up.pk if follow_up else None, line.text)
            if key in existing:
                continue
            ExampleAnswer.objects.create(
                question=question,
                follow_up=follow_up,
                text=line.text,
                expected_key_points=list(line.key_points),
                expected_wrong_answer="" if follow_up else line.wrong_answer,
                note=line.note,
                ordering=next_ordering,
            )
            existing.add(key)
            next_ordering += 1
            created += 1
    return created
