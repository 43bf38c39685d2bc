"""Run before Submit on the exercise page, whatever its view:
{% visible_examples exercise %} (in the statement) and {% run_panel exercise %} (below the
editor); the values filters format a Run's arrays."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import template

from grader.engine.trial_args import shape_text
from grader.engine.trials import arguments_of
from grader.models import Exercise
from grader.selectors.trials import exercise_visible_examples
from grader.views.trials import FIELD_PREFIX

register = template.Library()


@register.inclusion_tag("grader/_run_examples.html")
def visible_examples(exercise: Exercise) -> dict[str, Any]:
    return {"examples": exercise_visible_examples(exercise=exercise)}


@register.inclusion_tag("grader/_run_panel.html", takes_context=True)
def run_panel(context: template.Context, exercise: Exercise) -> dict[str, Any]:
    request = context.get("request")
    user = getattr(request, "user", None)
    return {
        "exercise": exercise,
        "signed_in": bool(user and user.is_authenticated),
        "fields": [
            {
                "name": FIELD_PREFIX + a.name,
                "label": a.name,
                "help": a.help,
                "is_int": a.role == "int",
            }
            for a in arguments_of(exercise.kind)
        ],
        "seed_name": FIELD_PREFIX + "seed",
    }


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _nested(value: Any, depth: int = 0) -> str:
    if not isinstance(value, list):
        return _scalar(value)
    if not any(isinstance(v, list) for v in value):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    # One row per line, as numpy prints: a matrix reads as one.
    return "[" + (",\n" + " " * (depth + 1)).join(_nested(v, depth + 1) for v in value) + "]"


@register.filter
def trial_values(value: Any) -> str:
    """A nested list of numbers as numpy-like text (autoescaped by the template)."""
    if value is None:
        return "(too large to show)"
    return _nested(value)


@register.filter
def trial_shape(shape: Sequence[int] | None) -> str:
    return "" if shape is None else shape_text(shape)
