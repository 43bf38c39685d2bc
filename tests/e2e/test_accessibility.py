"""End to end in headless Chromium: an axe-core scan of every page a visitor, a student and an
instructor reach, at 1280 and 390 px, with no serious or critical violation.

axe-core (package.json's devDependencies, node_modules/axe-core) is evaluated in the page over
the DevTools protocol, which the site's strict CSP does not govern (a <script> tag would be
refused). Run with -s to print every violation found, the minor ones too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from grader.models import (
    ExerciseValidation,
    TrialRun,
)
from grader.selectors.exercises import exercise_list_published
from questions.models import Question
from tests.e2e.flows import (
    course_with_students,
    example_answers_sampled,
    regrade_with_notice,
    staff_pages,
    student_with_two_verdicts,
)
from tests.factories import user_create
from tests.pipeline.stack import golden

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = (1280, 390)
BLOCKING = ("serious", "critical")
# Moderate for axe, but a skipped heading level breaks the outline screen readers navigate by.
BLOCKING_RULES = ("heading-order",)

_RUN_AXE = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations.map(v => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")),
  }));
}"""


@cache
def _axe_source() -> str:
    if not AXE.exists():
        pytest.skip(f"no axe-core at {AXE} (npm install provides it)")
    return AXE.read_text()


def _scan(tab: Page, paths: Iterable[str], *, ready: Callable[[Page, str], None] | None = None):
    """Each path at each width: the serious and critical violations, as readable lines."""
    found: list[str] = []
    for width in WIDTHS:
        tab.set_viewport_size({"width": width, "height": 900})
        for path in paths:
            response = tab.goto(path)
            assert response is not None and response.status < 400, (path, response)
            tab.wait_for_load_state("load")
            if ready is not None:
                ready(tab, path)
            if not tab.evaluate("() => typeof window.axe === 'object'"):
                tab.evaluate(_axe_source())
            for v in tab.evaluate(_RUN_AXE):
                line = f"{path} @{width}: [{v['impact']}] {v['id']}: {v['help']} {v['nodes']}"
                print(line)
                if v["impact"] in BLOCKING or v["id"] in BLOCKING_RULES:
                    found.append(line)
    return found


def _editor(tab: Page, path: str) -> None:
    if path.startswith("/exercises/") and path.count("/") == 3:
        expect(tab.locator("#editor")).to_be_visible()  # Ace replaced the textarea


@pytest.fixture
def graded(db: None) -> dict[str, object]:
    return student_with_two_verdicts(username="student-axe", worker="axe")


def test_the_public_pages_have_no_serious_accessibility_violation(page: Page) -> None:
    paths = ["/", "/questions/", "/explainer/", "/misconceptions/", "/exercises/"]
    paths += [f"/questions/{q.slug}/" for q in Question.objects.published()]
    paths += [e.get_absolute_url() for e in exercise_list_published()]
    paths += ["/accounts/login/", "/accounts/signup/", "/accounts/password_reset/"]
    found = _scan(page, paths)
    assert not found, "serious accessibility violations:\n" + "\n".join(found)


def test_an_answered_question_has_no_serious_accessibility_violation(page: Page) -> None:
    question = Question.objects.published().first()
    page.goto(f"/questions/{question.slug}/")
    page.get_by_role("textbox", name="Your answer", exact=True).fill(
        "The variance of q·k grows with d_k, so the softmax saturates without the scale."
    )
    page.get_by_role("button", name="Submit my answer").click()
    expect(page.locator("#assessment")).to_be_visible()
    found = _scan(page, [f"/questions/{question.slug}/"])
    assert not found, "serious accessibility violations:\n" + "\n".join(found)


def test_the_student_pages_have_no_serious_accessibility_violation(
    logged_in_page: Callable[..., Page], graded: dict[str, object]
) -> None:
    tab = logged_in_page(graded["student"], "student-pass-123")
    exercise = graded["exercise"]
    older, newer = graded["submissions"]
    run = TrialRun.objects.create(
        user=graded["student"], exercise=exercise, code=golden("correct_matmul")
    )
    # A regrade that moved both: its notice on the exercise's pages, and its details page.
    regrade = regrade_with_notice(older, newer)
    paths = [e.get_absolute_url() for e in exercise_list_published()]
    paths += [
        "/exercises/",
        f"/exercises/{exercise.slug}/history/",
        f"/exercises/{exercise.slug}/history/?a={older.pk}&b={newer.pk}",
        f"/submissions/{older.pk}/",
        f"/submissions/{newer.pk}/",
        f"/runs/{run.pk}/",
        f"/regrades/{regrade.pk}/",
    ]
    # The course pages as its student sees them (an extension, an override with its comment).
    teacher = user_create(username="teacher-axe")
    paths += course_with_students(instructor=teacher, student=graded["student"])["student_paths"]
    found = _scan(tab, paths, ready=_editor)
    assert not found, "serious accessibility violations:\n" + "\n".join(found)


def test_the_staff_and_admin_pages_have_no_serious_accessibility_violation(
    logged_in_page: Callable[..., Page], instructor, graded: dict[str, object]
) -> None:
    exercise = graded["exercise"]
    ExerciseValidation.objects.create(
        exercise=exercise,
        requested_by=instructor,
        status=ExerciseValidation.Status.DONE,
        finished_at=timezone.now(),
        report={
            "reference_passed": True,
            "reference": {"status": "passed", "message": "", "score": 1.0, "diagnosis": []},
            "uncaught": [],
            "check_labels": ["Worked example"],
            "reference_cells": [True],
            "rows": [],
        },
    )
    question = Question.objects.published().first()
    example_answers_sampled(question)  # its Validate page assesses every one on load
    submission = graded["submissions"][0]
    tab = logged_in_page(instructor, "instructor-pass-123")
    paths = [
        *staff_pages(exercise=exercise, question=question, submission=submission),
        f"/staff/exercises/{exercise.slug}/regrade/confirm/",
        "/admin/questions/question/add/",
        f"/admin/questions/question/{question.pk}/validate/?show=wrong&page=2",
    ]
    # The course's staff pages, with a similarity pair to show side by side.
    course = course_with_students(
        instructor=instructor, student=graded["student"], peer_code=golden("correct_matmul")
    )
    paths += course["staff_paths"] + course["admin_paths"]
    paths.append(
        f"/courses/{course['course'].slug}/assignments/{course['assignment'].pk}/work/{submission.pk}/"
    )
    found = _scan(tab, paths)
    assert not found, "serious accessibility violations:\n" + "\n".join(found)
