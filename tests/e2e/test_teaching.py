"""End-to-end: from a verdict to its explanation to the live demonstration, no interview gate.

A student submits a known wrong implementation, a real worker grades it, and the verdict names
the misconception. One click on its name opens the explanation (open to anyone, with its
computed figure); from missing-scale's section one more click opens the ten-minute
demonstration, which trains both heads in the browser. A wrong answer with a rebuttal shows the
rebuttal's text in the verdict itself, while the question page keeps its gate.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from grader.engine.misconception_figures import misconception_figure
from grader.engine.misconceptions import MISCONCEPTIONS
from tests.e2e.flows import submit_code
from tests.pipeline.stack import golden

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.stack,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

MISSING_SCALE = golden("missing_scale")
SCALE_BY_D = golden("scale_by_d")
GRADING_TIMEOUT_MS = 30_000
TRAINING_TIMEOUT_MS = 60_000  # a few seconds alone; the machine is shared


def submit(page: Page, code: str) -> None:
    submit_code(page, code)
    expect(page.locator("#result .verdict")).to_have_attribute(
        "data-status", "failed", timeout=GRADING_TIMEOUT_MS
    )


def test_verdict_to_explanation_to_demonstration(
    student_page: Page, js_errors: list[str], screenshot: Callable[..., object]
) -> None:
    page = student_page
    submit(page, MISSING_SCALE)
    m = MISCONCEPTIONS["missing-scale"]
    named = page.locator('#result .misconception[data-code="missing-scale"]')
    expect(named).to_be_visible()
    # The picture of the misconception is titled with its name, linked, not with its slug.
    pictured = page.locator("#result [data-misconception] h4")
    expect(pictured.get_by_role("link", name=m.title)).to_be_visible()
    screenshot(page, "teaching-1-verdict")

    # One click: the misconception's name is the link to its explanation.
    named.get_by_role("link", name=m.title).click()
    page.wait_for_url(f"**/misconceptions/#{m.anchor}")
    section = page.locator(f"section#{m.anchor}")
    expect(section).to_be_in_viewport()
    expect(section.locator("h2")).to_have_text(m.title)
    # Its computed number, as the engine computes it (tests/grader recomputes it by hand).
    figure = misconception_figure("missing-scale")
    for _, value in figure.rows:
        expect(section.locator("td[data-figure-value]", has_text=value).first).to_be_visible()
    expect(section.locator("svg.figure-bars")).to_have_count(2)
    screenshot(page, "teaching-2-explanation")

    # One more: the live demonstration trains both heads in the browser.
    section.get_by_role("link", name="Watch training stall").click()
    page.wait_for_url("**/explainer/#demonstration")
    fig = page.locator('figure#demonstration[data-xp="demonstration"]')
    expect(fig).to_be_in_viewport()
    expect(fig).to_have_attribute("data-state", "done", timeout=TRAINING_TIMEOUT_MS)
    expect(fig.locator('[data-out="summary"]')).to_contain_text("without it the loss stays at")
    screenshot(page, "teaching-3-demonstration")
    assert js_errors == []


def test_the_rebuttal_is_in_the_verdict_and_the_question_keeps_its_gate(
    student_page: Page, screenshot: Callable[..., object]
) -> None:
    page = student_page
    submit(page, SCALE_BY_D)
    m = MISCONCEPTIONS["scale-by-d"]
    named = page.locator('#result .misconception[data-code="scale-by-d"]')
    expect(named).to_be_visible()
    rebuttal = named.locator("[data-rebuttal]")
    expect(rebuttal).to_be_visible()
    expect(rebuttal).to_contain_text("It shrinks the scores too far")
    screenshot(page, "teaching-4-rebuttal-in-verdict")

    named.locator("[data-explanation-link]").click()
    page.wait_for_url(f"**/misconceptions/#{m.anchor}")
    section = page.locator(f"section#{m.anchor}")
    expect(section.locator("[data-rebuttal]")).to_contain_text("It shrinks the scores too far")

    # The interview question has not been answered: its rebuttals stay behind the gate.
    page.goto("/questions/why-divide-before-softmax/")
    expect(page.get_by_text("It shrinks the scores too far")).to_have_count(0)
