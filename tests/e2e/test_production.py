"""The site as deployed, in Chromium: DEBUG off, static files collected with hashed names.

Every other browser test runs with DEBUG on, where static files keep their plain names, so a
script that finds a file by its name (the editor once looked for ace.js that way) works there
and breaks in production only. Here the module's live server is the deployed site
(tests/e2e/production.py): collectstatic with the manifest storage, gunicorn with production
settings and a real Celery worker. Every page with a script must load without a JavaScript
error, a CSP violation (conftest.py's tabs fail on one) or a failed request, and every script it
loads must be a hashed file of the manifest, including the modules Ace and the explorables load
themselves. The student's flow goes through the Ace editor itself, typed into with the keyboard.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from lti_tool.models import LtiRegistration
from playwright.sync_api import Page, expect

from grader.models import Exercise, Submission
from lti.views import MSG_REGISTERED
from questions.models import Question
from tests.e2e.flows import (
    ATTENTION_EXERCISE,
    VERDICT_TIMEOUT_MS,
    course_with_students,
    example_answers_sampled,
    regrade_with_notice,
)
from tests.e2e.production import DeployedSite, Loads, password_set, watch
from tests.factories import student_create
from tests.lti.platform import ROLE_INSTRUCTOR, Platform

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.stack,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

SLUG = "scaled-dot-product-attention"
PASSWORD = "deployed-pass-123"
# A correct implementation, typed key by key. Its body has no nested block, so Ace's own
# indentation after the `def` line is all the indentation it needs: the lines are typed bare.
CODE = """import numpy as np

def attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    scores = scores if mask is None else np.where(mask, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V"""
EXAMPLES = ("worked-example", "masked", "batched")
WORKED_QUESTION = "scaled-dot-product-attention-by-hand"
ANSWER = "The first query gives its first key a weight of about 0.814 after the softmax."
# What scripts draw after the load event (the explorables, KaTeX fetched on demand), likewise.
DRAWN_TIMEOUT_MS = 30_000
# How a page shows that its scripts ran: (path, a selector that only they make appear).
PUBLIC_PAGES = (
    ("/", None),
    ("/questions/", None),
    ("/questions/why-divide-before-softmax/", None),
    ("/explainer/", "figure#demonstration[data-mounted]"),
    ("/exercises/", None),
    ("/misconceptions/", None),
    (ATTENTION_EXERCISE, None),
    ("/api/docs/", ".swagger-ui .information-container"),
)


@pytest.fixture(scope="module")
def live_server(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DeployedSite]:
    """This module's live server is the deployed site, so conftest.py's tabs open it."""
    site = DeployedSite(Path(tmp_path_factory.mktemp("static-root")))
    try:
        site.start()
        yield site
    finally:
        site.stop()


def _assert_clean(loads: Loads, where: str = "") -> None:
    assert loads.problems() == [], f"{where}\n" + "\n".join(loads.problems())


def _visit(tab: Page, loads: Loads, path: str, ready: str | None = None) -> None:
    tab.goto(path)  # after the load event: every script of the page has run
    if ready:
        expect(tab.locator(ready).first).to_be_attached(timeout=DRAWN_TIMEOUT_MS)
    _assert_clean(loads, path)


def test_a_student_types_in_the_ace_editor_runs_and_submits(
    logged_in_page: Callable[..., Page], live_server: DeployedSite
) -> None:
    student = student_create(username="student-prod")
    password_set(student, PASSWORD)
    tab = logged_in_page(student, PASSWORD)
    loads = watch(tab, live_server)
    _visit(tab, loads, ATTENTION_EXERCISE)

    # Ace, not the fallback textarea, with its Python mode loaded (keywords highlighted).
    editor = tab.locator("#editor.ace_editor")
    expect(editor).to_be_visible(timeout=DRAWN_TIMEOUT_MS)
    expect(tab.locator("textarea#code")).to_be_hidden()
    editor.click()
    expect(editor.locator("textarea.ace_text-input")).to_be_focused()
    tab.keyboard.press("Control+A")
    tab.keyboard.press("Delete")
    tab.keyboard.type("\n".join(line.strip() for line in CODE.splitlines()))
    assert tab.evaluate("window.codeEditor.getValue()") == CODE
    keyword = editor.locator(".ace_keyword", has_text="def")
    expect(keyword).to_have_count(1, timeout=DRAWN_TIMEOUT_MS)
    assert tab.evaluate("window.codeEditor.session.getMode().$id") == "ace/mode/python"

    tab.get_by_role("button", name="Run", exact=True).click()
    run = tab.locator("#run-result .run")
    expect(run).to_have_attribute("data-status", "done", timeout=VERDICT_TIMEOUT_MS)
    for name in EXAMPLES:
        case = run.locator(f'.run-case[data-case="{name}"]')
        expect(case.locator(".run-match")).to_have_text("✓ matches")
        expect(case.locator(".run-output")).to_be_visible()
        expect(case.locator(".run-expected")).to_be_visible()

    tab.get_by_role("button", name="Submit for grading").click()
    verdict = tab.locator("#result .verdict")
    expect(verdict).to_have_attribute("data-status", "passed", timeout=VERDICT_TIMEOUT_MS)
    expect(verdict.locator(".score")).to_have_text("Score 1.00")
    # The pictures are drawn by an ES module (plots.js) and the modules it imports.
    expect(tab.locator("[data-submission-plots][data-mounted]")).to_be_attached(
        timeout=DRAWN_TIMEOUT_MS
    )
    submission = Submission.objects.get(user=student)
    assert submission.code == CODE

    _visit(tab, loads, f"/exercises/{SLUG}/history/")
    expect(tab.get_by_role("link", name=f"#{submission.pk}")).to_be_visible()
    _visit(tab, loads, f"/submissions/{submission.pk}/", "[data-submission-plots][data-mounted]")
    assert any("/vendor/ace/mode-python." in script for script in loads.scripts)
    # A regrade that moved the submission: its notice's details page.
    regrade = regrade_with_notice(submission)
    _visit(tab, loads, f"/regrades/{regrade.pk}/")
    expect(tab.get_by_role("heading", level=1)).to_be_visible()
    # Enrolled in a course, the graded submission counts for its assignment.
    teacher = student_create(username="teacher-prod")
    world = course_with_students(instructor=teacher, student=student)
    for path in world["student_paths"]:
        _visit(tab, loads, path)
    _visit(tab, loads, world["course"].get_absolute_url())
    row = tab.get_by_role("row", name=world["assignment"].title)
    expect(row.locator(".score")).to_have_text("1.00")
    _assert_clean(loads)


def test_every_public_page_loads_its_scripts(page: Page, live_server: DeployedSite) -> None:
    loads = watch(page, live_server)
    for path, ready in PUBLIC_PAGES:
        _visit(page, loads, path, ready)
        if path == "/explainer/":
            # The explorables and the formulas (KaTeX, loaded on demand) both appeared.
            expect(page.locator("figure[data-xp][data-mounted]")).not_to_have_count(0)
            expect(page.locator(".katex").first).to_be_attached(timeout=DRAWN_TIMEOUT_MS)
    # A question's answer, once revealed: its formulas and the worked example, live.
    _visit(page, loads, f"/questions/{WORKED_QUESTION}/")
    page.get_by_role("textbox", name="Your answer", exact=True).fill(ANSWER)
    page.get_by_role("button", name="Submit my answer").click()
    worked = page.locator('figure[data-xp="worked-example"][data-mounted]')
    expect(worked).to_be_attached(timeout=DRAWN_TIMEOUT_MS)
    expect(page.locator(".katex").first).to_be_attached(timeout=DRAWN_TIMEOUT_MS)
    assert any("/explorables/compute." in script for script in loads.scripts)
    assert any("/vendor/katex/katex." in script for script in loads.scripts)
    _assert_clean(loads)


def test_every_staff_page_loads_its_scripts(
    logged_in_page: Callable[..., Page], instructor, live_server: DeployedSite
) -> None:
    password_set(instructor, PASSWORD)
    tab = logged_in_page(instructor, PASSWORD)
    loads = watch(tab, live_server)
    question = Question.objects.get(slug="why-divide-before-softmax")
    example_answers_sampled(question)  # Validate assesses every one on load
    exercise = Exercise.objects.get(slug=SLUG)
    for path, ready in (
        ("/admin/", "#staff-pages"),
        (f"/admin/questions/question/{question.pk}/change/", None),
        ("/admin/questions/question/add/", None),
        # Validate typesets the labels' maths: KaTeX fetched by math.js, hashed names.
        (f"/admin/questions/question/{question.pk}/validate/", ".katex"),
        (f"/questions/{question.slug}/preview/", None),
        (f"/admin/grader/exercise/{exercise.pk}/change/", None),
        ("/staff/submissions/", None),
        ("/staff/misconceptions/", None),
        (f"/staff/exercises/{SLUG}/regrade/", None),
    ):
        _visit(tab, loads, path, ready)
    # A course's staff pages and its admin (the members' inline loads the admin's scripts).
    student = student_create(username="course-student")
    course = course_with_students(instructor=instructor, student=student, peer_code=CODE)
    for path in course["staff_paths"] + course["admin_paths"]:
        _visit(tab, loads, path)
    assert any("/admin/js/" in script for script in loads.scripts)
    _assert_clean(loads)


def test_the_lti_pages_load_their_scripts(
    page: Page,
    live_server: DeployedSite,
    platform: Platform,
    platform_tab: Callable[..., Page],
) -> None:
    # Dynamic registration: the page that tells the platform it may close its frame.
    loads = watch(page, live_server)
    query = urlencode(
        {
            "openid_configuration": platform.openid_configuration_url,
            "registration_token": platform.registration_token,
        }
    )
    _visit(page, loads, f"/lti/register/?{query}")
    expect(page.locator("#lti-registered")).to_have_text(MSG_REGISTERED)
    assert any("/js/lti." in script for script in loads.scripts)
    # Deep linking: the page whose script posts the chosen item back to the platform by itself.
    hint = platform.launch_prepare(sub="teacher-prod", roles=[ROLE_INSTRUCTOR], deep_linking=True)
    # The platform it recorded, activated as an admin would.
    registration = LtiRegistration.objects.get(issuer=platform.issuer)
    registration.is_active = True
    registration.save(update_fields=["is_active"])
    assert registration.deployments.update(is_active=True) == 1
    tab = platform_tab(hint, registration)
    framed = watch(tab, live_server)
    frame = tab.frame_locator("#tool")

    frame.get_by_label("Exercise or question").select_option(label="Scaled dot-product attention")
    frame.get_by_role("button", name="Add to the course").click()
    expect(frame.get_by_role("heading", name="Added 1 item(s)")).to_be_visible()
    assert len(platform.deep_link_items) == 1
    assert any("/js/lti." in script for script in framed.scripts)
    _assert_clean(framed)
