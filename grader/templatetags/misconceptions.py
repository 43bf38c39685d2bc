"""{{ codes|misconceptions }}: diagnosis codes as names (also as HTML) with links to their
explanations; {{ text|as_math }}: a grader message with d_k written dₖ (still escaped)."""

from __future__ import annotations

from typing import Any

from django import template

from common.rendering import render_inline
from grader.engine.messages import as_math
from grader.engine.misconceptions import misconception_describe

register = template.Library()


@register.filter(name="misconceptions")
def misconceptions_filter(codes: list[str] | None) -> list[dict[str, Any]]:
    described = [misconception_describe(code) for code in codes or []]
    # The titles are our Markdown (`K.T` in backticks): rendered and sanitised for the page.
    return [{**m, "title_html": render_inline(m["title"])} for m in described]


@register.filter(name="as_math")
def as_math_filter(text: str) -> str:
    return as_math(str(text))
