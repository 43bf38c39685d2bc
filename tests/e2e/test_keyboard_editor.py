"""End to end in headless Chromium with a real worker: the editor by keyboard alone.

Tab lands in the editor's text (not Ace's gutter or content stops), Tab there indents, Escape
then Tab leaves it; the unchanged starter code is refused with the service's message, and the
verdict (or the refusal) takes focus when it arrives, at a phone's width and a desktop's.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from grader.models import Submission
from grader.services.submitting import MSG_CODE_UNCHANGED
from tests.e2e.flows import ATTENTION_EXERCISE, VERDICT_TIMEOUT_MS

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.stack,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

VIEWPORTS = {390: {"width": 390, "height": 844}, 1280: {"width": 1280, "height": 900}}
TYPED = "# typed with the keyboard alone"
FINAL = ("passed", "failed", "error", "internal-error")
MAX_TABS = 80

# Where focus is: enough to tell Ace's stops (gutter, content, text) and the page's apart.
_FOCUS_JS = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return 'body';
  const cls = typeof el.className === 'string' ? el.className : '';
  if (cls.includes('ace_text-input')) return 'editor-text';
  if (cls.includes('ace_scroller')) return 'editor-content';
  if (cls.includes('ace_gutter')) return 'editor-gutter';
  if (el.closest('#editor')) return 'editor-other ' + el.tagName + ' ' + cls;
  if (el.matches('#result .verdict')) return 'verdict';
  return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' ' +
    (el.textContent || '').trim().slice(0, 30);
}"""


def _focus(page: Page) -> str:
    return str(page.evaluate(_FOCUS_JS))


def _press_until(page: Page, key: str, target: str) -> list[str]:
    """Press ``key`` until focus is on ``target``; the stops passed on the way."""
    stops: list[str] = []
    for _ in range(MAX_TABS):
        page.keyboard.press(key)
        where = _focus(page)
        stops.append(where)
        if where == target:
            return stops
    raise AssertionError(f"{key} never reached {target}: {stops}")


def _verdict_has_focus(page: Page, statuses: tuple[str, ...]) -> None:
    page.wait_for_function(
        """statuses => {
          const el = document.activeElement;
          return !!el && el.matches('#result .verdict') &&
            (statuses.length === 0 || statuses.includes(el.getAttribute('data-status')));
        }""",
        arg=list(statuses),
        timeout=VERDICT_TIMEOUT_MS,
    )


@pytest.mark.parametrize("width", sorted(VIEWPORTS))
def test_the_editor_by_keyboard_alone_refuses_the_starter_then_grades_and_focuses_the_verdict(
    student_page: Page, screenshot: Callable[..., object], width: int
) -> None:
    page = student_page
    page.set_viewport_size(VIEWPORTS[width])
    page.goto(ATTENTION_EXERCISE + "?fresh=1")
    expect(page.locator("#editor")).to_be_visible()

    # Tab from the top of the page lands in the text, with no gutter or content stop before.
    stops = _press_until(page, "Tab", "editor-text")
    assert not [s for s in stops if s.startswith("editor-") and s != "editor-text"], stops

    # The path: Escape then Tab, straight to Submit, with the starter code unchanged.
    page.keyboard.press("Escape")
    assert _focus(page) == "editor-content"
    page.keyboard.press("Tab")
    assert _focus(page).startswith("button#submit-button"), _focus(page)
    page.keyboard.press("Enter")
    refused = page.locator("#result .verdict-rejected")
    expect(refused).to_contain_text(MSG_CODE_UNCHANGED)
    _verdict_has_focus(page, ())
    assert Submission.objects.count() == 0
    screenshot(page, f"keyboard-starter-refused-{width}")

    # Back into the editor from below: Shift+Tab lands in the text too. Type, and Tab indents.
    _press_until(page, "Shift+Tab", "editor-text")
    page.keyboard.press("Control+End")
    page.keyboard.type(TYPED)
    page.keyboard.press("Home")
    page.keyboard.press("Tab")
    assert _focus(page) == "editor-text"
    assert f"    {TYPED}" in page.evaluate("() => window.codeEditor.getValue()")

    # Escape, then Shift+Tab leaves backwards (not into the text again); Tab comes back in.
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Tab")
    assert not _focus(page).startswith("editor-"), _focus(page)
    page.keyboard.press("Tab")
    assert _focus(page) == "editor-text"

    # Escape, Tab, Enter: submitted, graded, and the verdict has focus when it arrives.
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert _focus(page).startswith("button#submit-button"), _focus(page)
    page.keyboard.press("Enter")
    _verdict_has_focus(page, FINAL)
    submission = Submission.objects.get()
    assert TYPED in submission.code
    screenshot(page, f"keyboard-verdict-{width}")

    # No trap: from the verdict, Tab goes on through the rest of the page to the footer.
    _press_until(page, "Tab", "a API")
