"""End to end in headless Chromium: stored XSS vectors are inert under the site's CSP.

The sanitiser (common.rendering) is the first line and is tested without a browser in
tests/common/test_rendering.py; here the vectors, with and without math, are saved where
instructors write Markdown and loaded in a real browser, with the CSP the site sends.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from questions.models import Page as ExplainerPage
from questions.models import Question

pytestmark = pytest.mark.e2e

# Each one sets window.__pwned if any of it runs.
VECTORS = [
    '[first]($x" autofocus onfocus="window.__pwned=1" x="$)',
    '[t](/x "$a" onmouseover="window.__pwned=1$")',
    '![$x" onerror="window.__pwned=1$](/missing.png)',
    "`$<img src=x onerror=window.__pwned=1>$`",
    "<img src=x onerror=window.__pwned=1>",
    "<script>window.__pwned=1</script>",
    "[click](javascript:window.__pwned=1)",
    '<a href="#" onclick="window.__pwned=1">go</a>',
    "$<svg onload=window.__pwned=1>$",
]


def _assert_inert(page: Page) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    # Give autofocus, load and error handlers their chance, then poke at the links.
    page.wait_for_load_state("load")
    for link in page.locator("main a").all()[:20]:
        link.hover()
        link.focus()
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.__pwned === undefined")
    assert not dialogs


def test_xss_vectors_in_the_explainer_lead_are_inert(page: Page) -> None:
    explainer = ExplainerPage.objects.get(slug="why-divide-by-sqrt-d")
    explainer.lead = "\n\n".join(VECTORS)
    explainer.save()
    page.goto("/explainer/")
    _assert_inert(page)
    # The math still renders with KaTeX, so the CSP left the page working.
    assert page.locator(".katex").count() >= 1


def test_xss_vectors_in_a_question_prompt_are_inert(page: Page) -> None:
    question = Question.objects.get(slug="why-divide-before-softmax")
    question.prompt = "\n\n".join([*VECTORS, "Scores $q \\cdot k / \\sqrt{d_k}$."])
    question.save()
    page.goto(f"/questions/{question.slug}/")
    _assert_inert(page)


def test_an_inline_script_that_slipped_through_would_be_blocked(page: Page) -> None:
    """The CSP itself, without the sanitiser: inject an inline script and see it refused."""
    page.goto("/questions/")
    page.evaluate(
        """() => { const s = document.createElement('script');
                   s.textContent = 'window.__pwned = 1'; document.body.appendChild(s); }"""
    )
    page.wait_for_timeout(200)
    assert page.evaluate("() => window.__pwned === undefined")
    # ...and the browser said why (the fixture would fail the test on it: expected here).
    assert any("script-src" in v for v in page.csp_violations)  # type: ignore[attr-defined]
    page.csp_violations.clear()  # type: ignore[attr-defined]
