"""End to end, an instructor writes a custom check in the admin (a broken one is refused on
save), and Validate, run by a real worker in its sandbox, shows it catching a wrong
implementation."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from grader.engine.checks.custom import MSG_SOURCE_SYNTAX
from grader.models import Exercise, ExerciseCheck

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.stack,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

SLUG = "stable-softmax"
LABEL = "Rows sum to 1"
MESSAGE = "On {what}, the rows of your output must sum to 1."
SOURCE = """import numpy as np


def check(student, expected, x, *rest):
    return bool(np.allclose(student.sum(axis=-1), 1.0, atol=1e-9))
"""
BROKEN = "def check(student, expected, x):\n    return (\n"
VALIDATION_TIMEOUT_MS = 120_000  # every wrong implementation, twice through the sandbox


def test_an_instructor_adds_a_custom_check_and_validate_shows_it_catching(
    worker_stack: None, instructor_page: Page, screenshot: Callable[..., object]
) -> None:
    exercise = Exercise.objects.get(slug=SLUG)
    n = exercise.checks.count()
    page = instructor_page
    page.goto(f"/admin/grader/exercise/{exercise.pk}/change/")
    page.locator("#checks-group .add-row a").click()
    page.locator(f"#id_checks-{n}-name").select_option("custom")
    page.locator(f"#id_checks-{n}-label").fill(LABEL)
    page.locator(f"#id_checks-{n}-params").fill(f'{{"message": "{MESSAGE}"}}')
    page.locator(f"#id_checks-{n}-order").fill(str(n + 1))
    page.locator(f"#id_checks-{n}-source").fill(BROKEN)
    page.locator("input[name=_continue]").click()

    # Refused on save, with the line and Python's own words.
    error = MSG_SOURCE_SYNTAX.format(line=2, error="'(' was never closed")
    expect(page.locator(f"#checks-{n} .errorlist")).to_contain_text(error)
    assert not ExerciseCheck.objects.filter(exercise=exercise, name="custom").exists()
    page.locator(f"#id_checks-{n}-source").fill(SOURCE)
    page.locator("input[name=_continue]").click()
    expect(page.locator(".messagelist .success")).to_be_visible()
    saved = ExerciseCheck.objects.get(exercise=exercise, name="custom")
    assert saved.params == {"message": MESSAGE, "source": SOURCE}  # lines end in LF, not CRLF
    expect(page.locator(f"#id_checks-{n}-source")).to_have_value(SOURCE)
    # Shown once: in its box, not in the params' JSON as well.
    expect(page.locator(f"#id_checks-{n}-params")).not_to_have_value(re.compile("numpy"))
    screenshot(page, "exercise-admin-custom-check")

    page.goto(f"/admin/grader/exercise/{exercise.pk}/validate/")
    page.get_by_role("button", name="Validate").click()
    status = page.locator("#validation-status")
    expect(status).to_contain_text("Validated", timeout=VALIDATION_TIMEOUT_MS)
    expect(page.locator("#reference-status")).to_have_text(
        "The reference solution passes every check."
    )
    table = page.locator("#validate-table")
    headers = [t.strip() for t in table.locator("thead th").all_text_contents()]
    column = headers.index(LABEL)
    unnormalized = table.locator("tbody tr", has_text="softmax_unnormalized")
    expect(unnormalized.locator("td").nth(column)).to_have_text("✔")
    # The reference passes it, and no implementation is an error of the check.
    reference = table.locator("tbody tr").first
    expect(reference.locator("td").nth(column)).to_have_text("passes")
    expect(page.locator("#check-errors")).to_have_count(0)
    expect(table.locator(".check-error")).to_have_count(0)
    screenshot(page, "exercise-validate-custom-check")
