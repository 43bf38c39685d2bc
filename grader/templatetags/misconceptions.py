"""{{ codes|misconceptions }}: diagnosis codes as names with links to their explanations;
{{ text|as_math }}: a grader message with d_k written dₖ (still escaped text)."""

from __future__ import annotations

from typing import Any

from django import template

from grader.engine.checks.messages import as_math
from grader.engine.misconceptions import misconception_describe

register = template.Library()


@register.filter(name="misconceptions")
def misconceptions_filter(codes: list[str] | None) -> list[dict[str, Any]]:
    return [misconception_describe(code) for code in codes or []]


@register.filter(name="as_math")
def as_math_filter(text: str) -> str:
    return as_math(str(text))
