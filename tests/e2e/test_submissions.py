"""A student submits in the browser and watches the verdict arrive from a real worker."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.flows import VERDICT_TIMEOUT_MS, submit_code
from tests.pipeline.stack import golden

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.stack,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

MISSING_SCALE = golden("missing_scale")
CORRECT = golden("correct_matmul")


def test_a_correct_submission_shows_progress_then_passes_with_heatmaps(
    student_page: Page, screenshot: Callable[..., object]
) -> None:
    submit_code(student_page, CORRECT)
    verdict = student_page.locator("#result .verdict")
    expect(verdict).to_be_visible()
    expect(verdict).to_have_attribute("data-status", "passed", timeout=VERDICT_TIMEOUT_MS)
    expect(verdict.locator(".score")).to_have_text("Score 1.00")
    expect(verdict.locator("table.checks tbody tr")).not_to_have_count(0)
    expect(verdict.locator(".misconception")).to_have_count(0)
    expect(student_page.get_by_text("Your function, pictured")).to_be_visible()
    screenshot(student_page, "submission-passed")


def test_a_missing_scale_is_named_with_its_picture_and_history_diffs(
    student_page: Page, screenshot: Callable[..., object]
) -> None:
    submit_code(student_page, MISSING_SCALE)
    verdict = student_page.locator("#result .verdict")
    expect(verdict).to_have_attribute("data-status", "failed", timeout=VERDICT_TIMEOUT_MS)
    expect(verdict.locator('.misconception[data-code="missing-scale"]')).to_be_visible()
    screenshot(student_page, "submission-missing-scale")

    submit_code(student_page, CORRECT)
    expect(student_page.locator("#result .verdict")).to_have_attribute(
        "data-status", "passed", timeout=30_000
    )
    student_page.goto("/exercises/scaled-dot-product-attention/history/")
    student_page.get_by_role("button", name="Show the changes").click()
    expect(student_page.locator(".diff .diff-add", has_text="np.sqrt(d_k)")).to_have_count(1)
    screenshot(student_page, "submission-history-diff")
