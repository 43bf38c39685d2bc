"""Prove that no answer text reaches a response before the attempt.

Every secret field of a question gets a unique marker appended; a response leaks when a
marker shows up in it. Markers are plain words, so Markdown and escaping leave them intact.
"""

from __future__ import annotations

import re

from questions.models import Question

_MARKER = re.compile(r"zzleak(\w+?)zz")


def plant_markers(question: Question) -> dict[str, str]:
    """Append a marker to the answers, expected answers, rebuttals and wrong statements."""
    markers: dict[str, str] = {}

    def mark(obj: object, field: str, key: str) -> None:
        marker = f"zzleak{re.sub(r'[^a-z0-9]', '', key)}zz"
        setattr(obj, field, f"{getattr(obj, field)} {marker}")
        obj.save(update_fields=[field])  # type: ignore[attr-defined]
        markers[key] = marker

    mark(question, "short_answer", "short")
    mark(question, "full_answer", "full")
    for wa in question.wrong_answers.all():
        mark(wa, "rebuttal", f"rebuttal{wa.pk}")
        mark(wa, "statement", f"statement{wa.pk}")
    for fu in question.follow_ups.all():
        mark(fu, "expected_answer", f"expected{fu.pk}")
        mark(fu, "prompt", f"prompt{fu.pk}")
    return markers


def leaked(body: str) -> list[str]:
    return sorted(set(_MARKER.findall(body)))
