"""End to end in headless Chromium: keyboard focus is visible everywhere on an exercise page (a
ring of at least 3:1 against what is behind it) and the code editor keeps an accessible name."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.flows import ATTENTION_EXERCISE
from tests.factories import student_create
from tests.test_focus_contrast import contrast

pytestmark = pytest.mark.e2e

# What has focus, its outline, and the first opaque background behind it.
_FOCUSED_JS = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const ringed = el.closest('.code-editor') || el;
  const style = getComputedStyle(ringed);
  let bg = 'rgb(255, 255, 255)';
  // A ring drawn inside the element (negative offset) lies on the element's own background.
  const inset = parseFloat(style.outlineOffset) < 0;
  for (let a = inset ? ringed : ringed.parentElement; a; a = a.parentElement) {
    const c = getComputedStyle(a).backgroundColor;
    if (c && c !== 'transparent' && !/rgba\\(.*,\\s*0\\)$/.test(c)) { bg = c; break; }
  }
  const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : '');
  return {name, tag: el.tagName.toLowerCase(), outline: style.outlineStyle,
          width: parseFloat(style.outlineWidth), colour: style.outlineColor, background: bg,
          label: el.getAttribute('aria-label') || ''};
}"""


def _hex(rgb: str) -> str:
    r, g, b = (int(v) for v in re.findall(r"\d+", rgb)[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def test_every_focus_stop_on_an_exercise_has_a_visible_ring(
    logged_in_page: Callable[..., Page],
) -> None:
    user = student_create(username="focus-student", password="student-pass-123")
    page = logged_in_page(user, "student-pass-123")
    page.goto(ATTENTION_EXERCISE)
    expect(page.locator("#editor")).to_be_visible()
    page.locator("body").focus()
    seen: dict[str, dict[str, object]] = {}
    for _ in range(60):
        page.keyboard.press("Tab")
        focused = page.evaluate(_FOCUSED_JS)
        if focused is None:
            continue
        seen.setdefault(focused["name"], focused)
        if "ace_text-input" in focused["name"]:
            break
    tags = {f["tag"] for f in seen.values()}
    assert {"a", "summary", "button"} <= tags, tags
    inside = page.evaluate(_FOCUSED_JS)
    # Tab lands in the editor's text itself (static/grader/editor.js), where Tab indents.
    assert inside is not None and "ace_text-input" in inside["name"], list(seen)
    # Escape moves focus to the editor's content (Ace's keyboard mode), ringed too.
    page.keyboard.press("Escape")
    content = page.evaluate(_FOCUSED_JS)
    assert content is not None and content["name"].startswith("div.ace_scroller"), content
    seen[content["name"]] = content
    weak = [
        f"{name}: {f['outline']} {f['width']}px {f['colour']} on {f['background']}"
        for name, f in seen.items()
        if f["outline"] == "none"
        or f["width"] < 2
        or contrast(_hex(str(f["colour"])), _hex(str(f["background"]))) < 3
    ]
    assert not weak, "focus rings that are missing or too faint:\n" + "\n".join(weak)
    assert str(inside["label"]).startswith("Python code editor"), inside["label"]
