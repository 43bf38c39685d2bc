"""End to end, an instructor: regrade with a confirmation, watch its progress, and the
student whose score changed sees why; drill down from a misconception's count to the
submissions that show it; download the grades as CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from grader.models import Exercise, RegradeNotice
from tests.factories import student_create, submission_create
from tests.pipeline.stack import golden, wait_until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.stack,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

SLUG = "scaled-dot-product-attention"
CORRECT = golden("correct_matmul")
GRADING_TIMEOUT_MS = 60_000  # a preview and a regrade on a shared 2-core machine
PHONE = {"width": 390, "height": 844}


def _student(name: str):
    return student_create(username=name, password=f"{name}-pass-123")


def _stored(user, *, status: str, score: float | None, codes: list[str] | None = None):
    return submission_create(
        user=user,
        exercise=Exercise.objects.get(slug=SLUG),
        code=CORRECT,
        seed=7,
        status=status,
        score=score,
        diagnosis=codes or [],
    )


def _fits_a_phone(page: Page) -> None:
    page.set_viewport_size(PHONE)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{page.url} scrolls sideways at 390 px ({width} px)"
    page.set_viewport_size({"width": 1280, "height": 900})


def test_regrade_confirm_progress_done_then_the_student_sees_why(
    worker_stack: None,
    instructor_page: Page,
    logged_in_page: Callable[..., Page],
    screenshot: Callable[..., object],
) -> None:
    ann = _student("ann-e2e")
    # Correct code stored as failed: as if the checks had been wrong when it was graded.
    wronged = _stored(ann, status="failed", score=0.0)
    _stored(_student("bob-e2e"), status="passed", score=1.0)
    page = instructor_page
    page.goto(f"/staff/exercises/{SLUG}/regrade/")
    page.get_by_role("button", name="Preview the regrade").click()
    preview = page.locator("#preview")
    expect(preview).to_have_attribute("data-status", "done", timeout=GRADING_TIMEOUT_MS)
    expect(page.locator("#preview-summary")).to_contain_text("1 of 2 graded submissions")

    page.get_by_role("link", name="Apply: regrade all 2 submissions…").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "Apply the regrade of Scaled dot-product attention?"
    )
    expect(page.locator("#confirm-count")).to_contain_text("2 submissions will be graded again")
    _fits_a_phone(page)
    screenshot(page, "instructor-regrade-confirm")
    page.get_by_role("button", name="Regrade 2 submissions").click()

    progress = page.locator("#regrade-progress")
    expect(progress).to_be_visible()
    expect(page.locator("#preview")).to_have_count(0)  # the used preview and its Apply are gone
    expect(page.get_by_role("link", name="Apply: regrade all 2 submissions…")).to_have_count(0)
    expect(progress).to_contain_text("of 2 regraded")
    expect(progress).to_have_attribute("data-done", "true", timeout=GRADING_TIMEOUT_MS)
    expect(progress).to_contain_text("2 of 2 regraded;")
    # The worker stores a regraded verdict, then its notice, in two commits: a poll between
    # them reads "done, 0 scores changed" and polls no more (a product race, pinned by
    # tests/grader/test_regrades.py). Under load the worker (nice 10) is often descheduled
    # there. So: once the notice is written, the page as the instructor loads it again.
    wait_until(
        lambda: RegradeNotice.objects.filter(submission=wronged).exists(),
        timeout=GRADING_TIMEOUT_MS / 1000,
    )
    page.goto(f"/staff/exercises/{SLUG}/regrade/")
    expect(progress).to_contain_text("2 of 2 regraded; 1 score changed")
    screenshot(page, "instructor-regrade-done")

    student = logged_in_page(ann, "ann-e2e-pass-123")
    student.goto(f"/exercises/{SLUG}/history/")
    notice = student.locator(f'.regrade-notice[data-submission="{wronged.pk}"]')
    expect(notice).to_contain_text("your best score went from 0.00 to 1.00")
    expect(notice).to_contain_text("because the exercise's checks changed on")
    student.goto(f"/exercises/{SLUG}/")
    expect(notice).to_be_visible()  # on the exercise page too, until dismissed
    screenshot(student, "student-regrade-notice")
    notice.get_by_role("button", name="Dismiss").click()
    student.wait_for_load_state()
    expect(student.locator(".regrade-notice")).to_have_count(0)
    student.goto(f"/exercises/{SLUG}/history/")
    expect(student.locator(".regrade-notice")).to_have_count(0)


def test_a_regrade_of_several_attempts_shows_one_notice_and_lists_the_small_moves(
    worker_stack: None,
    instructor_page: Page,
    logged_in_page: Callable[..., Page],
    screenshot: Callable[..., object],
) -> None:
    ann = _student("ann-e2e")
    # Correct code: the real worker grades each passed, 1.00. One was stored as failed (a
    # status change, announced); three as passed a hair below 1 (moves under the threshold).
    wronged = _stored(ann, status="failed", score=0.0)
    nearly = [_stored(ann, status="passed", score=score) for score in (0.97, 0.98, 0.99)]
    page = instructor_page
    page.goto(f"/staff/exercises/{SLUG}/regrade/confirm/")
    expect(page.get_by_label("Announce score moves of at least")).to_have_value("0.05")
    page.get_by_role("button", name="Regrade 4 submissions").click()
    expect(page.locator("#regrade-progress")).to_have_attribute(
        "data-done", "true", timeout=GRADING_TIMEOUT_MS
    )
    wait_until(
        lambda: RegradeNotice.objects.filter(user=ann).count() == 4,
        timeout=GRADING_TIMEOUT_MS / 1000,
    )
    page.goto(f"/staff/exercises/{SLUG}/regrade/")
    expect(page.locator("#regrade-quiet")).to_contain_text("3 of them moved less than 0.05")

    student = logged_in_page(ann, "ann-e2e-pass-123")
    student.goto(f"/exercises/{SLUG}/")
    notices = student.locator(".regrade-notice")
    expect(notices).to_have_count(1)
    expect(notices).to_contain_text("your best score went from 0.99 to 1.00")
    expect(notices.get_by_role("button", name="Dismiss")).to_have_count(1)
    screenshot(student, "student-regrade-one-notice")
    notices.get_by_role("link", name="What changed in 4 attempts").click()
    rows = student.locator("tr.regrade-detail")
    expect(rows).to_have_count(4)
    expect(student.locator(f'tr[data-submission="{wronged.pk}"]')).to_have_attribute(
        "data-announced", "yes"
    )
    for s in nearly:
        expect(student.locator(f'tr[data-submission="{s.pk}"]')).to_have_attribute(
            "data-announced", "no"
        )
    screenshot(student, "student-regrade-details")
    student.goto(f"/exercises/{SLUG}/")
    notices.get_by_role("button", name="Dismiss").click()
    student.wait_for_load_state()
    expect(student.locator(".regrade-notice")).to_have_count(0)


def test_from_a_misconception_count_to_the_submissions_that_show_it(
    instructor_page: Page, screenshot: Callable[..., object]
) -> None:
    ann = _student("ann-e2e")
    hit = _stored(ann, status="failed", score=0.2, codes=["missing-scale"])
    other = _stored(ann, status="failed", score=0.5, codes=["scale-by-d"])
    _stored(ann, status="error", score=0.0)
    page = instructor_page
    page.goto("/admin/")
    page.locator("#staff-pages").get_by_role("link", name="Misconceptions").click()
    article = page.locator('article[data-code="missing-scale"]')
    expect(article.locator("h3")).to_contain_text("The scores are not divided by √d_k")
    expect(article).to_contain_text("1 of 1 students affected (100%)")
    expect(article.locator("svg[role=img] rect.bar")).to_have_count(30)
    errors = page.locator('article[data-code="errors-and-timeouts"]')
    expect(errors.locator("h3")).to_have_text("Errors and time-outs")
    expect(errors).to_contain_text("1 of 1 students affected")
    _fits_a_phone(page)
    screenshot(page, "instructor-misconceptions")

    article.locator("a.filtered-list").click()
    page.wait_for_url("**/staff/submissions/?*misconception=missing-scale*")
    expect(page.get_by_label("Misconception")).to_have_value("missing-scale")
    rows = page.locator("table tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.get_by_role("link", name=f"#{hit.pk}")).to_be_visible()
    expect(page.get_by_role("link", name=f"#{other.pk}")).to_have_count(0)


def test_the_grades_download_has_each_students_scores(instructor_page: Page, instructor) -> None:
    ann = _student("=ann-e2e")  # a username a spreadsheet would run as a formula
    _stored(ann, status="failed", score=0.5)
    _stored(ann, status="passed", score=1.0)
    _stored(instructor, status="passed", score=1.0)  # staff trying the exercise: no row
    page = instructor_page
    page.goto("/staff/submissions/")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the grades (CSV)").click()
    path = download.value.path()
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert rows == [
        {
            "username": "'=ann-e2e",
            "exercise": SLUG,
            "best_score": "1.0000",
            "latest_score": "1.0000",
            "submissions": "2",
            "last_submitted_at": rows[0]["last_submitted_at"],
        }
    ]
    assert rows[0]["last_submitted_at"].endswith("+00:00")


def test_the_exercise_form_with_its_checks_does_not_scroll_sideways_at_1280(
    instructor_page: Page, screenshot: Callable[..., object]
) -> None:
    exercise = Exercise.objects.get(slug=SLUG)
    assert exercise.checks.count() >= 2
    page = instructor_page
    page.goto(f"/admin/grader/exercise/{exercise.pk}/change/")
    group = page.locator("#checks-group")
    expect(group).to_be_visible()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 1280, f"the form scrolls sideways at 1280 px ({width} px)"
    # Nor does any box inside the checks scroll sideways (a table in its own scroller did).
    sideways = group.evaluate(
        """g => [g, ...g.querySelectorAll("*")]
            .filter(e => e.scrollWidth > e.clientWidth + 1
                && ["auto", "scroll"].includes(getComputedStyle(e).overflowX))
            .map(e => e.tagName + "." + e.className)"""
    )
    assert sideways == [], sideways
    for field in ("weight", "visibility"):
        box = page.locator(f"#id_checks-0-{field}").bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1280, (field, box)
    screenshot(page, "exercise-admin-checks-1280")


@pytest.mark.parametrize("extra_checks", [0, 8])
def test_the_exercise_validate_page_shows_the_diagnosis_column_whole(
    instructor_page: Page, instructor, screenshot: Callable[..., object], extra_checks: int
) -> None:
    """Whole, even when an exercise has more checks than fit 1280 px (they scroll in their
    box, the diagnosis does not)."""
    from django.utils import timezone

    from grader.engine.misconceptions import WRONG_IMPLEMENTATIONS, misconception_describe
    from grader.models import ExerciseValidation

    exercise = Exercise.objects.get(slug=SLUG)
    labels = [c.label or c.name for c in exercise.checks.all()]
    labels += [f"An instructor's own check {k}" for k in range(extra_checks)]
    impls = [impl for impl in WRONG_IMPLEMENTATIONS if impl.kind == exercise.kind]
    codes = [impl.code for impl in impls]
    # What the worker stores; a diagnosis naming two codes, as a wrong implementation's can.
    rows = [
        {
            "code": impl.code,
            "title": misconception_describe(impl.code)["title"],
            "implementation": impl.func.__name__,
            "caught": True,
            "named": True,
            "score": 0.25,
            "diagnosis": [impl.code, *codes[:1]],
            "cells": [i % 2 == 0 for i in range(len(labels))],
        }
        for impl in impls
    ]
    ExerciseValidation.objects.create(
        exercise=exercise,
        requested_by=instructor,
        status=ExerciseValidation.Status.DONE,
        finished_at=timezone.now(),
        report={
            "reference_passed": True,
            "reference": {"status": "passed", "message": "", "score": 1.0, "diagnosis": []},
            "uncaught": [],
            "check_labels": labels,
            "reference_cells": [True] * len(labels),
            "rows": rows,
        },
    )
    page = instructor_page
    page.goto(f"/admin/grader/exercise/{exercise.pk}/validate/")
    table = page.locator("#validate-table")
    expect(table.locator("tbody tr[data-code]")).to_have_count(len(rows))
    clipped = table.evaluate(
        """t => {
            const box = t.parentElement.getBoundingClientRect();
            return [...t.querySelectorAll("td.diagnosis")]
                .filter(td => {
                    const r = td.getBoundingClientRect();
                    return r.right > box.right + 1 || td.scrollWidth > td.clientWidth + 1;
                })
                .map(td => td.textContent.trim());
        }"""
    )
    assert clipped == [], clipped
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 1280, f"the page scrolls sideways ({width} px)"
    first = table.locator("tbody tr[data-code] td.diagnosis").first
    expect(first).to_contain_text(", ".join([codes[0], *codes[:1]]))
    screenshot(page, f"exercise-validate-diagnosis-{len(labels)}-checks")
