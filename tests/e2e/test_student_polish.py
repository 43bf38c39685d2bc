"""End to end in headless Chromium: what a student reads after a verdict, and on a phone.

Misconception texts are rendered (no Markdown backticks), the checks become cards with a
readable Details column at 390 px, the editor starts within the first screen of a phone with
the statement's essentials above it, history rows say why an error or a timeout was not
evaluated, and every control of an exercise page has a name.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from grader.engine.sandbox.messages import CPU_TIME, MSG_CPU_LIMIT, MSG_IMPORT_ERROR
from grader.models import Exercise, ExerciseCheck, Submission
from grader.selectors.exercises import exercise_limits, exercise_limits_text
from tests.e2e.flows import ATTENTION_EXERCISE

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

PHONE = {"width": 390, "height": 844}
PASSWORD = "polish-pass-123"
# Both explanations hold Markdown code spans (`axis`, `np.swapaxes(K, -1, -2)`).
CODES = ["softmax-wrong-axis", "batch-transpose"]
LONG_DETAILS = (
    "Expected shape (2, 3, 5, 4) but your function returned (3, 2, 5, 4): the batch axes came "
    "back in another order. " * 3
).strip()
TRACEBACK = (
    'Traceback (most recent call last):\n  File "submission.py", line 3, in <module>\n'
    "    import torch\nModuleNotFoundError: No module named 'torch' <b>$x$</b>"
)


@pytest.fixture
def student(db: None):
    return get_user_model().objects.create_user("polish-student", password=PASSWORD)


def _submission(user, **fields: object) -> Submission:
    return Submission.objects.create(
        user=user,
        exercise=Exercise.objects.get(slug="scaled-dot-product-attention"),
        seed=1,
        code=fields.pop("code", "import numpy as np\n\ndef attention(Q, K, V, mask=None):\n"),
        **fields,
    )


def _failed_with_misconceptions(user) -> Submission:
    """A verdict as the worker stores it, with long check details and two misconceptions."""
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    checks = [
        {
            "name": c.name,
            "label": c.label,
            "passed": i % 2 == 0,
            "weight": c.weight,
            "visibility": ExerciseCheck.Visibility.SHOWN,
            "message": "" if i % 2 == 0 else LONG_DETAILS,
        }
        for i, c in enumerate(exercise.checks.all())
    ]
    return _submission(
        user,
        status=Submission.Status.FAILED,
        score=0.5,
        message="4 of 8 checks failed.",
        diagnosis=CODES,
        checks=checks,
    )


def test_a_verdicts_misconceptions_are_rendered_and_its_checks_are_cards_on_a_phone(
    logged_in_page: Callable[..., Page], student, screenshot: Callable[..., object]
) -> None:
    submission = _failed_with_misconceptions(student)
    page = logged_in_page(student, PASSWORD)
    for width in (1280, PHONE["width"]):
        page.set_viewport_size({"width": width, "height": PHONE["height"]})
        page.goto(f"/submissions/{submission.pk}/")
        misconceptions = page.locator(".misconception")
        expect(misconceptions).to_have_count(len(CODES))
        for i in range(len(CODES)):
            text = misconceptions.nth(i).inner_text()
            assert "`" not in text, text
            expect(misconceptions.nth(i).locator("code").first).to_be_visible()
        expect(misconceptions.nth(1).locator("h3 code")).to_have_text(".T")
    # At 390 px: each check a card, its Details as wide as the card, and nothing sideways.
    details = page.locator("table.checks td.check-details", has_text="batch axes came back")
    expect(details.first).to_be_visible()
    width = details.first.evaluate("td => td.getBoundingClientRect().width")
    card = page.locator("table.checks tbody tr").first.evaluate(
        "tr => tr.getBoundingClientRect().width"
    )
    assert width >= 0.8 * card and card >= 0.8 * (PHONE["width"] - 60), (width, card)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    # Still a table to assistive technology.
    expect(page.get_by_role("table", name="Hidden checks")).to_be_visible()
    expect(page.get_by_role("row")).not_to_have_count(0)
    screenshot(page, "verdict-misconceptions-cards-390")
    # The history names them rendered too.
    page.goto("/exercises/scaled-dot-product-attention/history/")
    named = page.locator('a[data-code="batch-transpose"]')
    expect(named.locator("code")).to_have_text(".T")
    assert "`" not in named.inner_text()


def test_on_a_phone_the_essentials_and_the_editor_come_first(
    logged_in_page: Callable[..., Page], student, screenshot: Callable[..., object]
) -> None:
    # The heaviest case: a best result and a resumed submission above the editor too.
    _submission(student, status=Submission.Status.PASSED, score=1.0, message="All passed.")
    page = logged_in_page(student, PASSWORD)
    page.set_viewport_size(PHONE)
    page.goto(ATTENTION_EXERCISE)
    expect(page.locator("#editor")).to_be_visible()
    essentials = page.locator(".statement-essentials")
    expect(essentials).to_contain_text("attention(Q, K, V, mask=None)")
    tops = page.evaluate(
        """() => Object.fromEntries(['.statement-essentials', '#editor'].map(s =>
             [s, document.querySelector(s).getBoundingClientRect().top + window.scrollY]))"""
    )
    assert tops[".statement-essentials"] < tops["#editor"] < PHONE["height"], tops
    # The full contract is one tap away, folded between them.
    contract = page.locator(".statement > details")
    expect(contract).not_to_have_attribute("open", "")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(page, "exercise-phone-editor-first")


def test_history_rows_show_why_an_error_or_a_timeout_was_not_evaluated(
    logged_in_page: Callable[..., Page], student, screenshot: Callable[..., object]
) -> None:
    _submission(
        student,
        status=Submission.Status.ERROR,
        message=MSG_IMPORT_ERROR.format(traceback=TRACEBACK),
    )
    _submission(student, status=Submission.Status.ERROR, message=MSG_CPU_LIMIT.format(seconds=2))
    page = logged_in_page(student, PASSWORD)
    page.set_viewport_size(PHONE)
    page.goto("/exercises/scaled-dot-product-attention/history/")
    reasons = page.locator(".history-reason.no-math")
    expect(reasons).to_have_count(2)
    expect(reasons.nth(0)).to_have_text(MSG_CPU_LIMIT.format(seconds=2))
    expect(reasons.nth(1)).to_have_text(
        "ModuleNotFoundError: No module named 'torch' <b>$x$</b> (line 3)"
    )
    assert page.locator(".history-reason b, .history-reason .katex").count() == 0
    # Beside the status, so a phone shows it without scrolling the table sideways.
    expect(reasons.nth(0)).to_be_in_viewport(ratio=0.9)
    screenshot(page, "history-reasons-390")


def test_every_control_of_an_exercise_page_has_a_name(
    logged_in_page: Callable[..., Page], student
) -> None:
    page = logged_in_page(student, PASSWORD)
    page.goto(ATTENTION_EXERCISE)
    expect(page.locator("#editor")).to_be_visible()
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    unnamed = page.evaluate(
        """() => [...document.querySelectorAll(
             'main a[href], main button, main input, main select, main textarea, main [tabindex]'
           )].filter(el => {
             // Only what a keyboard reaches: shown, and not taken out of the Tab order.
             if (!el.getClientRects().length || el.tabIndex < 0) return false;
             const labelled = el.getAttribute('aria-labelledby');
             const name = (el.getAttribute('aria-label') || '') ||
               (labelled ? labelled.split(' ').map(id =>
                  (document.getElementById(id) || {}).textContent || '').join(' ') : '') ||
               [...(el.labels || [])].map(l => l.textContent).join(' ') ||
               (el.tagName === 'INPUT' ? '' : el.textContent) || el.title || '';
             return !name.trim();
           }).map(el => el.outerHTML.slice(0, 120))"""
    )
    assert not unnamed, unnamed
    ids = page.evaluate(
        "() => [...document.querySelectorAll('[id]')].map(e => e.id)"
        ".filter((id, i, all) => all.indexOf(id) !== i)"
    )
    assert not ids, f"duplicate ids: {ids}"


def test_the_page_and_a_timeout_state_the_same_limits(
    logged_in_page: Callable[..., Page], student, screenshot: Callable[..., object]
) -> None:
    # The statement's limits line and a time-out's reason come from the exercise's Limits, in
    # the same words: the page never says 5 s where the message says another figure.
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    limits = exercise_limits(exercise=exercise)
    cpu = CPU_TIME.format(seconds=limits.cpu_seconds)
    _submission(
        student,
        status=Submission.Status.ERROR,
        message=MSG_CPU_LIMIT.format(seconds=limits.cpu_seconds),
    )
    page = logged_in_page(student, PASSWORD)
    page.goto(ATTENTION_EXERCISE)
    stated = page.get_by_text(f"Limits: {exercise_limits_text(exercise=exercise)}.")
    expect(stated).to_be_visible()
    expect(stated).to_contain_text(cpu)
    page.goto("/exercises/scaled-dot-product-attention/history/")
    expect(page.locator(".history-reason").first).to_contain_text(cpu)
    screenshot(page, "limits-stated-once")
