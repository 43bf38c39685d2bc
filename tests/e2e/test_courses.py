"""In the browser: a student works on a course's assignment and sees the score that counts on
the course page, after a real worker graded the submission; the instructor reads it in the
gradebook, opens the submission, downloads the CSV and reads the similarity report."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from courses.selectors import STATE_DONE, STATE_OPEN
from tests.e2e.flows import VERDICT_TIMEOUT_MS, course_with_students, submit_code
from tests.pipeline.stack import golden

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.stack,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

CORRECT = golden("correct_matmul")


def test_a_graded_submission_counts_on_the_course_and_in_the_gradebook(
    student_page: Page,
    logged_in_page: Callable[..., Page],
    instructor,
    screenshot: Callable[..., object],
) -> None:
    student = get_user_model().objects.get(username="student-e2e")
    world = course_with_students(instructor=instructor, student=student, peer_code=CORRECT)
    course, assignment = world["course"], world["assignment"]

    # The student: the assignment is open, due later thanks to the extension.
    student_page.goto(course.get_absolute_url())
    row = student_page.get_by_role("row", name=assignment.title)
    expect(row.locator("[data-state]")).to_have_text(STATE_OPEN)
    expect(row).to_contain_text("extended")
    row.get_by_role("link", name=assignment.title).click()
    expect(student_page.locator("#extension-note")).to_contain_text("Lab closed")
    student_page.locator("#assignment-target").click()
    expect(student_page).to_have_url(assignment.exercise.get_absolute_url())

    # Submitted on the exercise's page, graded by the worker: it counts for the assignment.
    submit_code(student_page, CORRECT)
    expect(student_page.locator("#result .verdict")).to_have_attribute(
        "data-status", "passed", timeout=VERDICT_TIMEOUT_MS
    )
    student_page.goto(course.get_absolute_url())
    row = student_page.get_by_role("row", name=assignment.title)
    expect(row.locator("[data-state]")).to_have_text(STATE_DONE)
    expect(row.locator(".score")).to_have_text("1.00")
    # The override on the other assignment, with its comment on the assignment's page.
    essay = student_page.get_by_role("row", name="Why divide by √d_k")
    expect(essay).to_contain_text("set by your instructor")
    essay.get_by_role("link").click()
    expect(student_page.locator("#override-comment")).to_contain_text("Explained it in class")
    screenshot(student_page, "course-student")

    # The instructor: the gradebook links the score to the submission it came from.
    teacher = logged_in_page(instructor, "instructor-pass-123")
    teacher.goto(f"/courses/{course.slug}/gradebook/")
    gradebook = teacher.locator("#gradebook")
    expect(gradebook.locator("caption")).to_have_text("Scores that count, one row per student")
    cell = gradebook.locator(f'td[data-assignment="{assignment.pk}"][data-user="{student.pk}"]')
    expect(cell.locator("a.score")).to_have_text("1.00")
    screenshot(teacher, "course-gradebook")
    cell.locator("a.score").click()
    expect(teacher.locator("pre.code")).to_contain_text("np.sqrt")

    # The CSV, as downloaded.
    teacher.goto(f"/courses/{course.slug}/gradebook/")
    with teacher.expect_download() as download:
        teacher.get_by_role("link", name="Gradebook (CSV)").click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    header, lines = rows[0], {r[0]: r for r in rows[1:]}
    assert header[2:] == [assignment.title, "Why divide by √d_k"]
    assert lines["student-e2e"][2:] == ["1.0000", "0.9000"]

    # The similarity report: the two identical solutions side by side, for the instructor only.
    teacher.goto(f"/courses/{course.slug}/assignments/{assignment.pk}/similarity/")
    pair = teacher.locator("section.pair")
    expect(pair).to_have_count(1)
    expect(pair.locator("h2")).to_contain_text("student-e2e and student-e2e-peer")
    expect(pair.locator("mark").first).to_be_visible()
    screenshot(teacher, "course-similarity")
    response = student_page.goto(f"/courses/{course.slug}/assignments/{assignment.pk}/similarity/")
    assert response is not None and response.status == 403
