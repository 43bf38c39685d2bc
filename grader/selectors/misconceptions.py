"""Reads for the misconception explanations: each code described, with its wrong answer's rebuttal.

The rebuttal lives on the question page behind the interview gate (a candidate sees it only after
answering). A student sent here by a verdict is not answering that question, so the verdict and
the misconception page show the rebuttal's text itself; the question page keeps its gate.
"""

from __future__ import annotations

from typing import Any

from grader.engine.misconception_figures import misconception_links
from grader.engine.misconceptions import (
    MISCONCEPTIONS,
    QUESTION_PATH,
    QUESTION_SLUG,
    misconception_describe,
    misconceptions_catalogue,
)
from questions.models import WrongAnswer
from questions.rendering import render_markdown, strip_markers


def _rebuttals() -> dict[str, WrongAnswer]:
    """Slug -> the main question's wrong answer (only the slugs the catalogue links to)."""
    slugs = {m.wrong_answer_slug for m in MISCONCEPTIONS.values() if m.wrong_answer_slug}
    rows = WrongAnswer.objects.filter(question__slug=QUESTION_SLUG, slug__in=slugs)
    return {wa.slug: wa for wa in rows}


def _with_rebuttal(entry: dict[str, Any], rebuttals: dict[str, WrongAnswer]) -> dict[str, Any]:
    m = MISCONCEPTIONS.get(entry["code"])
    wa = rebuttals.get(m.wrong_answer_slug) if m and m.wrong_answer_slug else None
    return {
        **entry,
        # Markdown with $math$ (the API's plain form) and the same as safe HTML (the pages').
        "links": misconception_links(entry["code"]),
        # The question page itself: its #wrong-… anchors exist only once a candidate answered.
        "question_url": QUESTION_PATH.format(question=QUESTION_SLUG) if wa else None,
        "rebuttal": wa.rebuttal if wa else None,
        "rebuttal_statement": wa.statement if wa else None,
        "rebuttal_html": render_markdown(strip_markers(wa.rebuttal)) if wa else "",
        "rebuttal_statement_html": render_markdown(wa.statement) if wa else "",
    }


def misconceptions_described(*, codes: list[str]) -> list[dict[str, Any]]:
    """Each code described (engine.misconceptions) with its rebuttal's text, in the given order."""
    rebuttals = _rebuttals() if codes else {}
    return [_with_rebuttal(misconception_describe(code), rebuttals) for code in codes]


def misconception_catalogue_with_rebuttals() -> list[dict[str, Any]]:
    """Every code with its explanation, figure and rebuttal: the misconception page."""
    rebuttals = _rebuttals()
    return [_with_rebuttal(entry, rebuttals) for entry in misconceptions_catalogue()]
