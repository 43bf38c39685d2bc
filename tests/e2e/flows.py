"""Steps the browser tests share (fixtures are in conftest.py)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

ATTENTION_EXERCISE = "/exercises/scaled-dot-product-attention/"


def submit_code(page: Page, code: str, exercise: str = ATTENTION_EXERCISE) -> None:
    """Put `code` in the exercise's editor and submit it with the keyboard (Ctrl+Enter)."""
    page.goto(exercise)
    editor = page.locator("#editor")
    expect(editor).to_be_visible()  # Ace replaced the plain textarea
    page.evaluate("code => window.codeEditor.setValue(code, 1)", code)
    editor.click()
    page.keyboard.press("Control+Enter")
