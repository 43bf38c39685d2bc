"""End to end in headless Chromium at a phone's width (390 x 844): no page scrolls sideways.

Every page a visitor, a student and an instructor can reach is loaded at 390 px and must be no
wider than the window (wide tables, code, math and figures scroll inside their own box). The
same visit counts each page's bytes, so KaTeX is seen to load on the pages with math only.
Run with -s to print the per-page figures.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from playwright.sync_api import Page, Request, expect

from grader.engine.misconceptions import WRONG_IMPLEMENTATIONS, misconception_describe
from grader.models import Exercise, ExerciseValidation, TrialRun
from grader.selectors.exercises import exercise_list_published
from questions.models import Question
from tests.e2e.flows import example_answers_sampled, staff_pages, student_with_two_verdicts
from tests.pipeline.stack import golden

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

PHONE = {"width": 390, "height": 844}
KATEX = "/static/vendor/katex/"

# The elements sticking out of the window, for the failure message (the widest first).
_OFFENDERS_JS = """() => {
  const w = window.innerWidth;
  const label = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (typeof el.className === 'string' && el.className.trim()
      ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
  const clipped = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible' || a instanceof SVGElement) return true;
    }
    return false;
  };
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    const parent = el.parentElement.getBoundingClientRect();
    if (r.right > w + 0.5 && r.width > 0 && parent.right <= w + 0.5 && !clipped(el)) {
      const where = [];
      for (let a = el.parentElement; a && a !== document.body && where.length < 4;) {
        where.push(label(a));
        a = a.parentElement;
      }
      out.push([Math.round(r.right), label(el) + ' in ' + where.join(' < ')]);
    }
  }
  out.sort((a, b) => b[0] - a[0]);
  return out.slice(0, 6);
}"""

# TeX left as text: what a page with math shows when it did not declare it (no KaTeX loaded).
_RAW_TEX_JS = r"""() => {
  const text = document.querySelector('main').innerText;
  const m = text.match(/\$[^$\s][^$\n]*\$|\\\(|\\\[/);
  return m ? m[0].slice(0, 60) : '';
}"""


@dataclass
class Visit:
    path: str
    status: int
    width: int
    offenders: list[list[object]]
    bytes: int
    katex_bytes: int
    math: int  # KaTeX-rendered formulas on the page
    raw_tex: str  # TeX shown as text, if any


@dataclass
class Recorder:
    """Loads pages in one tab; per visit: its width, its bytes and what KaTeX did there."""

    tab: Page
    window: int = PHONE["width"]
    visits: list[Visit] = field(default_factory=list)
    _sizes: list[tuple[str, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Each page's weight as a first visit pays it, not what the cache saved.
        cdp = self.tab.context.new_cdp_session(self.tab)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        self.tab.on("requestfinished", self._finished)

    def _finished(self, request: Request) -> None:
        try:
            sizes = request.sizes()
        except Exception:  # the tab navigated away meanwhile: not this page's bytes
            return
        self._sizes.append((request.url, sizes["responseBodySize"] + sizes["responseHeadersSize"]))

    def visit(self, path: str, ready: Callable[[Page], None] | None = None) -> Visit:
        self._sizes.clear()
        response = self.tab.goto(path)
        status = response.status if response is not None else 0
        self.tab.wait_for_load_state("networkidle")
        if ready is not None:
            ready(self.tab)
        # The page's weight as it arrives, before the disclosures below fetch fonts of their own.
        sizes = list(self._sizes)
        katex_bytes = sum(size for url, size in sizes if KATEX in url)
        # What a tap on each disclosure shows must fit too.
        self.tab.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        self.tab.wait_for_timeout(50)
        width = self.tab.evaluate("() => document.documentElement.scrollWidth")
        # The admin shows instructors their Markdown as written, TeX included.
        check_tex = not katex_bytes and not path.startswith("/admin/")
        visit = Visit(
            path=path,
            status=status,
            width=width,
            offenders=self.tab.evaluate(_OFFENDERS_JS) if width > self.window else [],
            bytes=sum(size for _, size in sizes),
            katex_bytes=katex_bytes,
            math=self.tab.locator(".katex").count(),
            raw_tex=self.tab.evaluate(_RAW_TEX_JS) if check_tex else "",
        )
        self.visits.append(visit)
        return visit


def _phone(tab: Page, width: int = PHONE["width"]) -> Recorder:
    tab.set_viewport_size({"width": width, "height": PHONE["height"]})
    assert tab.evaluate("() => window.innerWidth") == width
    return Recorder(tab, window=width)


def _report(recorder: Recorder, who: str) -> None:
    """Print the figures (-s), then fail on a page that did not load, scrolls sideways, or
    shows TeX as text because it did not ask for KaTeX."""
    for v in recorder.visits:
        print(
            f"{who:10} {v.path:58} {v.status} width {v.width:5}  {v.bytes / 1000:7.1f} kB"
            f"  (KaTeX {v.katex_bytes / 1000:6.1f} kB, {v.math} formulas)"
            + (f"\n    {v.offenders}" if v.offenders else "")
        )
    failed = [f"{v.path}: {v.status}" for v in recorder.visits if not 200 <= v.status < 400]
    assert not failed, "pages that did not load:\n" + "\n".join(failed)
    wide = [
        f"{v.path}: {v.width} px, {v.offenders}"
        for v in recorder.visits
        if v.width > recorder.window
    ]
    assert not wide, f"pages wider than a {recorder.window} px window:\n" + "\n".join(wide)
    raw = [f"{v.path}: {v.raw_tex!r}" for v in recorder.visits if v.raw_tex]
    assert not raw, "pages showing TeX without KaTeX (declare the math block):\n" + "\n".join(raw)


def _editor_ready(tab: Page) -> None:
    expect(tab.locator("#editor")).to_be_visible()


@pytest.fixture
def graded(db: None) -> dict[str, object]:
    return student_with_two_verdicts(
        username="student-phone", worker="phones", email="phone@example.com"
    )


def test_every_public_page_fits_a_phone(page: Page) -> None:
    recorder = _phone(page)
    for path in ("/", "/questions/", "/explainer/", "/misconceptions/", "/exercises/"):
        recorder.visit(path)
    for question in Question.objects.published():
        recorder.visit(f"/questions/{question.slug}/")
    for exercise in exercise_list_published():
        recorder.visit(exercise.get_absolute_url())
    for path in ("/accounts/login/", "/accounts/signup/", "/accounts/password_reset/"):
        recorder.visit(path)
    _report(recorder, "visitor")


def test_every_question_fits_a_phone_once_answered(page: Page) -> None:
    """The revealed answers, follow-ups, wrong answers and worked examples."""
    recorder = _phone(page)
    for question in Question.objects.published():
        page.goto(f"/questions/{question.slug}/")
        page.get_by_role("textbox", name="Your answer", exact=True).fill(
            "The variance of q·k grows with d_k, so the softmax saturates without the scale."
        )
        page.get_by_role("button", name="Submit my answer").click()
        expect(page.locator("#assessment")).to_be_visible()
        page.wait_for_load_state("networkidle")
        recorder.visit(f"/questions/{question.slug}/")
    _report(recorder, "answered")


def test_the_account_pages_fit_a_phone(page: Page, graded: dict[str, object]) -> None:
    """The password reset's pages, each as a visitor reaches it, and a page not found."""
    recorder = _phone(page)
    recorder.visit("/accounts/password_reset/")
    page.get_by_label("Email").fill("phone@example.com")
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    recorder.visit("/accounts/password_reset/done/")
    user = graded["student"]
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    recorder.visit(f"/accounts/reset/{uid}/{token}/")  # redirects to the set-password form
    expect(page.get_by_role("heading", name="Choose a new password")).to_be_visible()
    recorder.visit("/accounts/reset/done/")
    recorder.visit("/accounts/reset/bad-uid/bad-token/")
    missing = recorder.visit("/no-such-page/")
    assert missing.status == 404
    missing.status = 200  # expected here; the width is what this visit is for
    _report(recorder, "visitor")


def test_the_editor_is_near_the_top_of_an_exercise_on_a_phone(
    logged_in_page: Callable[..., Page], graded: dict[str, object]
) -> None:
    """The statement folds on a phone (one tap opens it), so the editor is not below it."""
    tab = logged_in_page(graded["student"], "student-pass-123")
    _phone(tab)
    tab.goto(graded["exercise"].get_absolute_url())
    _editor_ready(tab)
    statement = tab.locator(".statement > details")
    expect(statement).not_to_have_attribute("open", "")
    top = tab.evaluate(
        "() => document.getElementById('editor').getBoundingClientRect().top + window.scrollY"
    )
    assert top < 1.5 * PHONE["height"], f"the editor starts {top} px down the page"
    statement.locator("> summary").click()
    expect(statement.locator("p").first).to_be_visible()
    # ...and it stays open on a wide screen.
    tab.set_viewport_size({"width": 1280, "height": 900})
    tab.reload()
    expect(statement).to_have_attribute("open", "")


def test_every_student_page_fits_a_phone(
    logged_in_page: Callable[..., Page], graded: dict[str, object]
) -> None:
    recorder = _phone(logged_in_page(graded["student"], "student-pass-123"))
    for exercise in exercise_list_published():
        recorder.visit(exercise.get_absolute_url(), ready=_editor_ready)
    exercise = graded["exercise"]
    recorder.visit(f"/exercises/{exercise.slug}/history/")
    older, newer = graded["submissions"]
    recorder.visit(f"/exercises/{exercise.slug}/history/?a={older.pk}&b={newer.pk}")
    for submission in graded["submissions"]:
        recorder.visit(f"/submissions/{submission.pk}/")
    run = TrialRun.objects.create(
        user=graded["student"], exercise=exercise, code=golden("correct_matmul")
    )
    recorder.visit(f"/runs/{run.pk}/")
    _report(recorder, "student")


def _validation(exercise: Exercise, instructor: object) -> None:
    """A finished validation of the exercise with one row per known wrong implementation,
    shaped as the worker stores it (grader.services.exercises.validation_report_view)."""
    labels = [c.label or c.name for c in exercise.checks.all()] or ["check"]
    rows = [
        {
            "code": impl.code,
            "title": misconception_describe(impl.code)["title"],
            "implementation": impl.func.__name__,
            "caught": True,
            "named": True,
            "score": 0.25,
            "diagnosis": [impl.code],
            "cells": [i % 2 == 0 for i in range(len(labels))],
        }
        for impl in WRONG_IMPLEMENTATIONS
        if impl.kind == exercise.kind
    ]
    report = {
        "reference_passed": True,
        "reference": {"status": "passed", "message": "", "score": 1.0, "diagnosis": []},
        "uncaught": [],
        "check_labels": labels,
        "reference_cells": [True] * len(labels),
        "rows": rows,
    }
    ExerciseValidation.objects.create(
        exercise=exercise,
        requested_by=instructor,
        status=ExerciseValidation.Status.DONE,
        finished_at=timezone.now(),
        report=report,
    )


@pytest.mark.parametrize("width", [390, 1280])
def test_the_staff_and_admin_pages_fit_the_screen(
    logged_in_page: Callable[..., Page], instructor, graded: dict[str, object], width: int
) -> None:
    exercise = graded["exercise"]
    _validation(exercise, instructor)
    question = Question.objects.published().first()
    # Its Validate page assesses every example answer on load: a sample keeps its rows and
    # takes the page's time off the size of the evaluation set (see example_answers_sampled).
    assert example_answers_sampled(question) >= 3
    submission = graded["submissions"][0]
    recorder = _phone(logged_in_page(instructor, "instructor-pass-123"), width)
    paths = staff_pages(exercise=exercise, question=question, submission=submission)
    for path in paths:
        recorder.visit(path)
    _report(recorder, f"staff@{width}")
    # The Validate table itself fits 1280 px (its labels wrap); on a phone it scrolls in its box.
    recorder.tab.goto(f"/admin/grader/exercise/{exercise.pk}/validate/")
    table = recorder.tab.locator(".table-wrap > #validate-table")
    expect(table).to_be_visible()
    if width == 1280:
        table_width, box_width = table.evaluate(
            "t => [t.getBoundingClientRect().width, t.parentElement.clientWidth]"
        )
        assert table_width <= box_width + 1, f"Validate's table: {table_width} px in {box_width}"
