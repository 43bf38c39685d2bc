"""End to end in headless Chromium: text a student or candidate wrote is never typeset.

KaTeX's auto-render runs on the submission and question pages. An exception message holding
$\\text{all checks passed}$ or \\(...\\) must show as typed, on the student's page and on an
instructor's, while the trusted math beside it (a rebuttal, the model answer) is still drawn.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from grader.engine.messages import CALL_ERROR
from grader.models import Exercise, ExerciseCheck, Submission
from tests.factories import student_create, submission_create

pytestmark = pytest.mark.e2e

FAKE_VERDICT = r"$\text{all checks passed}$"
FAKE_PAREN = r"\(\checkmark\ \text{score } 1.00\)"
EXCEPTION = f"ValueError: {FAKE_VERDICT} and {FAKE_PAREN}"
STUDENT_TEXT = ".no-math"
# A diagnosis whose rebuttal holds trusted math ($1/d_k$), so KaTeX does run on the page.
DIAGNOSIS_WITH_MATH = "scale-by-d"


def _crafted_submission(owner) -> Submission:
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    check = exercise.checks.filter(visibility=ExerciseCheck.Visibility.SHOWN).first()
    error = f"{EXCEPTION}\n  at line 2, in attention: raise ValueError('...')"
    return submission_create(
        user=owner,
        exercise=exercise,
        seed=1,
        code="def attention(Q, K, V, mask=None):\n    raise ValueError('$x$')\n",
        status=Submission.Status.FAILED,
        score=0.0,
        message="Some checks failed.",
        stdout=f"printed {FAKE_VERDICT}\n",
        diagnosis=[DIAGNOSIS_WITH_MATH],
        checks=[
            {
                "name": check.name,
                "label": check.label,
                "passed": False,
                "weight": 1.0,
                "visibility": check.visibility,
                "message": CALL_ERROR.format(what="the worked example", error=error),
            }
        ],
    )


def _assert_typed_not_typeset(page: Page) -> None:
    # KaTeX ran: the trusted math of the page is drawn...
    expect(page.locator(".katex").first).to_be_attached()
    # ...but nothing inside the student's text, which reads as typed.
    details = page.locator("table.checks tbody td").nth(3)
    expect(details).to_contain_text(FAKE_VERDICT)
    expect(details).to_contain_text(FAKE_PAREN)
    assert page.locator("table.checks .katex").count() == 0
    assert page.locator(f"{STUDENT_TEXT} .katex").count() == 0


def test_a_crafted_exception_message_shows_as_typed_to_student_and_instructor(
    logged_in_page: Callable[..., Page], instructor, screenshot
) -> None:
    student = student_create(username="crafty", password="crafty-pass-123")
    submission = _crafted_submission(student)

    mine = logged_in_page(student, "crafty-pass-123")
    mine.goto(f"/submissions/{submission.pk}/")
    _assert_typed_not_typeset(mine)
    expect(mine.locator(".student-error")).to_contain_text(FAKE_VERDICT)
    screenshot(mine, "student-text-student")

    staff = logged_in_page(instructor, "instructor-pass-123")
    staff.goto(f"/submissions/{submission.pk}/")
    expect(staff.locator("main")).to_contain_text("by crafty")
    _assert_typed_not_typeset(staff)
    screenshot(staff, "student-text-instructor")


def test_a_candidates_answer_shows_as_typed(page: Page) -> None:
    page.goto("/questions/why-divide-before-softmax/")
    answer = f"{FAKE_VERDICT} Dividing by sqrt(d_k) keeps the variance of the scores at one."
    page.get_by_role("textbox", name="Your answer", exact=True).fill(answer)
    page.get_by_role("button", name="Submit my answer").click()
    quoted = page.locator("blockquote.your-answer")
    expect(page.locator(".katex").first).to_be_attached()  # the model answer's math
    expect(quoted).to_contain_text(FAKE_VERDICT)
    assert quoted.locator(".katex").count() == 0
    assert page.locator(f"{STUDENT_TEXT} .katex").count() == 0
