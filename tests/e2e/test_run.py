"""Run before Submit in the browser: a real worker runs the function on the visible examples,
and the page shows each output beside the expected one."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from grader.models import Submission
from tests.e2e.flows import ATTENTION_EXERCISE
from tests.pipeline.stack import golden

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.stack,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

CORRECT = golden("correct_matmul")
MISSING_SCALE = golden("missing_scale")
EXAMPLES = ("worked-example", "masked", "batched")


def run_code(page: Page, code: str) -> None:
    page.goto(ATTENTION_EXERCISE)
    expect(page.locator("#editor")).to_be_visible()  # Ace replaced the plain textarea
    page.evaluate("code => window.codeEditor.setValue(code, 1)", code)
    page.get_by_role("button", name="Run", exact=True).click()


def test_run_shows_matches_for_a_correct_function_and_a_mismatch_without_the_scale(
    student_page: Page, screenshot: Callable[..., object]
) -> None:
    # The statement shows the examples a Run uses.
    student_page.goto(ATTENTION_EXERCISE)
    for name in EXAMPLES:
        expect(student_page.locator(f'.visible-examples [data-example="{name}"]')).to_have_count(1)

    run_code(student_page, CORRECT)
    result = student_page.locator("#run-result .run")
    expect(result).to_have_attribute("data-status", "done", timeout=30_000)
    for name in EXAMPLES:
        case = result.locator(f'.run-case[data-case="{name}"]')
        expect(case.locator(".run-match")).to_have_text("✓ matches")
        expect(case.locator(".run-output")).to_be_visible()
        expect(case.locator(".run-expected")).to_be_visible()
    expect(result.locator(".run-case").first.locator(".run-expected")).to_contain_text("0.8137")
    screenshot(student_page, "run-matches")

    run_code(student_page, MISSING_SCALE)
    result = student_page.locator("#run-result .run")
    expect(result).to_have_attribute("data-status", "done", timeout=30_000)
    worked = result.locator('.run-case[data-case="worked-example"]')
    expect(worked).to_have_attribute("data-match", "false")
    expect(worked.locator(".run-match")).to_have_text("✗ does not match")
    expect(worked.locator(".run-diff")).to_be_visible()
    screenshot(student_page, "run-mismatch")
    assert Submission.objects.count() == 0  # a Run is never a submission


def test_run_takes_an_input_of_the_students_own_and_fits_a_phone(
    student_page: Page, screenshot: Callable[..., object]
) -> None:
    student_page.set_viewport_size({"width": 390, "height": 844})
    student_page.goto(ATTENTION_EXERCISE)
    student_page.get_by_text("Your own input (optional)").click()
    student_page.get_by_label("Q", exact=True).fill("2, 3")
    student_page.get_by_label("K", exact=True).fill("4, 3")
    student_page.get_by_label("V", exact=True).fill("[[1, 0], [0, 1], [1, 1], [2, 2]]")
    student_page.get_by_label("mask", exact=True).fill("causal")
    student_page.evaluate("code => { window.codeEditor.setValue(code, 1); }", CORRECT)
    student_page.get_by_role("button", name="Run", exact=True).click()
    result = student_page.locator("#run-result .run")
    expect(result).to_have_attribute("data-status", "done", timeout=30_000)
    custom = result.locator('.run-case[data-case="custom"]')
    expect(custom.locator(".run-match")).to_have_text("✓ matches")
    expect(custom).to_contain_text("Q (2, 3)")
    # No horizontal scroll at 390 px: the widest element fits the viewport.
    width = student_page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, width
    screenshot(student_page, "run-custom-input-390")

    # Enter in a custom-input field means Run, never Submit for grading.
    student_page.get_by_label("Q", exact=True).fill("17, 3")
    student_page.get_by_label("Q", exact=True).press("Enter")
    expect(student_page.locator("#run-result [role=alert]")).to_contain_text(
        "every dimension must be at most 16"
    )
    assert Submission.objects.count() == 0
