"""End-to-end: the explorables and the submission plots in headless Chromium.

The includes are rendered on bare test pages (tests/explorables/urls.py): each include must be
self-contained, and this keeps these tests independent of the pages that host them. A PNG of
each figure is saved to test-artifacts/ for review.
"""

# ruff: noqa: RUF001 - the figures print the multiplication sign and U+2212 on purpose

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

playwright_sync = pytest.importorskip("playwright.sync_api")
expect = playwright_sync.expect

# The test urlconf serves bare pages with one include each, plus every real URL of the site.
pytestmark = [pytest.mark.e2e, pytest.mark.urls("tests.explorables.urls")]

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture
def page(browser, live_server) -> Iterator[object]:
    """A tab on the live server that fails the test on any JavaScript error.

    Overrides the ``page`` of tests/e2e/conftest.py (whose session ``browser`` it reuses) to
    add that check; the bare test pages need no seeded content, the explainer test asks for it.
    """
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1100, "height": 900})
    context.set_default_timeout(15_000)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on(
        "console",
        lambda m: errors.append(m.text)
        if m.type == "error" and not m.text.startswith("Failed to load resource")
        else None,
    )
    # Resource failures by URL instead (a missing favicon is not the figures' business).
    tab.on(
        "response",
        lambda r: errors.append(f"{r.status} {r.url}")
        if r.status >= 400 and not r.url.endswith("/favicon.ico")
        else None,
    )
    yield tab
    context.close()
    assert not errors, f"JavaScript errors: {errors}"


def _open(page, path: str) -> None:
    page.goto(path)
    page.wait_for_selector("[data-mounted]")


def _shot(locator, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    locator.screenshot(path=str(ARTIFACTS / f"{name}.png"), animations="disabled")


def _num(text: str) -> float:
    return float(re.sub(r"[^0-9.\-]", "", text.replace("−", "-")))


def _set_range(locator, value: str) -> None:
    """Move a range input the way a user's drag does: set the value and fire input."""
    locator.evaluate(
        "(el, v) => { el.value = v; el.dispatchEvent(new Event('input', {bubbles: true})); }",
        value,
    )


def test_variance_slider_changes_numbers(page) -> None:
    _open(page, "/xp/variance/")
    fig = page.locator('[data-xp="variance"]')
    assert fig.locator(".xp-nojs").is_hidden()
    var_raw = fig.locator('[data-out="varRaw"]')
    # At d = 64 (the default): the seed's numbers within sampling noise.
    assert 54 < _num(var_raw.inner_text()) < 74
    assert 0.85 < _num(fig.locator('[data-out="varScaled"]').inner_text()) < 1.15
    assert _num(fig.locator('[data-out="topRaw"]').first.inner_text()) > 90
    assert 30 < _num(fig.locator('[data-out="topScaled"]').first.inner_text()) < 60
    assert fig.locator("svg[role=img]").count() == 4
    _shot(fig, "explorable-1-variance-d64")

    slider = fig.locator('input[type="range"]')
    slider.focus()
    page.keyboard.press("End")  # the keyboard works: jump to d = 512
    page.wait_for_function(
        "document.querySelector('[data-xp=variance] [data-out=d]').textContent === '512'"
    )
    assert slider.get_attribute("aria-valuetext") == "d = 512"
    assert 430 < _num(var_raw.inner_text()) < 600
    assert 0.85 < _num(fig.locator('[data-out="varScaled"]').inner_text()) < 1.15
    page.keyboard.press("Home")
    page.wait_for_function(
        "document.querySelector('[data-xp=variance] [data-out=d]').textContent === '1'"
    )
    assert _num(var_raw.inner_text()) < 2


def test_saturation_slider_shows_vanishing_gradient(page) -> None:
    _open(page, "/xp/saturation/")
    fig = page.locator('[data-xp="saturation"]')
    grad = fig.locator('[data-out="maxGrad"]')
    assert grad.inner_text() == "0.250"
    assert fig.locator(".xp-cell").count() == 25
    _shot(fig, "explorable-2-saturation-x1")
    _set_range(fig.locator('input[type="range"]'), "4")
    expect(grad).to_have_text("0.027")  # the redraw runs on the next animation frame
    assert "97%" in fig.locator('[data-out="top"]').inner_text()
    assert "cat" in fig.locator('[data-out="top"]').inner_text()
    _shot(fig, "explorable-2-saturation-x4")
    _set_range(fig.locator('input[type="range"]'), "10")
    expect(grad).to_have_text("5.4×10⁻⁵")
    assert fig.locator('input[type="range"]').get_attribute("aria-valuetext") == "scores ×10"


def test_sqrt_vs_d_choices(page) -> None:
    _open(page, "/xp/sqrt-vs-d/")
    fig = page.locator('[data-xp="sqrt-vs-d"]')
    variance = fig.locator('[data-out="variance"]')
    assert 0.85 < _num(variance.inner_text()) < 1.15  # √d is checked by default, d = 64
    fig.get_by_label("nothing").check()
    assert 54 < _num(variance.inner_text()) < 74
    fig.get_by_label("d", exact=True).check()
    assert 0.012 < _num(variance.inner_text()) < 0.02  # 1/64 = 0.0156
    assert _num(fig.locator('[data-out="top"]').inner_text()) < 25  # near uniform (12.5%)
    _shot(fig, "explorable-3-sqrt-vs-d-divide-by-d")
    fig.get_by_label("√d").check()
    _shot(fig, "explorable-3-sqrt-vs-d-divide-by-sqrt-d")


def test_judges_contest(page) -> None:
    _open(page, "/xp/judges/")
    fig = page.locator('[data-xp="judges"]')
    summary = fig.locator('[data-out="summary"]')
    assert "256" in summary.inner_text()
    col256 = fig.locator('[data-judges="256"]')
    before = col256.locator('[data-out="topRaw"]').inner_text()
    _shot(fig, "explorable-4-judges")
    fig.get_by_role("button", name="Hold another contest").click()
    expect(fig.locator('[data-out="contest"]')).to_have_text("2")
    after = col256.locator("svg").first.inner_html()
    assert after and before  # redrawn without errors


def test_worked_example_updates_when_q_changes(page) -> None:
    _open(page, "/xp/worked-example/")
    fig = page.locator('[data-xp="worked-example"]')
    out = fig.locator('[data-out-matrix="output"]')
    assert out.locator("td").all_inner_texts() == [
        "0.814",
        "0.494",
        "0.494",
        "0.814",
        "0.767",
        "0.616",
    ]
    assert "5.367" in fig.locator('[data-out="check"]').inner_text()
    _shot(fig, "worked-example")
    q11 = fig.get_by_label("Q row 1, column 1")
    q11.fill("3")
    scores = fig.locator('[data-out-matrix="scores"] td').all_inner_texts()
    assert scores[:3] == ["4", "0", "3"]  # Q row 1 = [3, 0, 1, 0] against the three keys
    assert out.locator("td").first.inner_text() != "0.814"
    fig.get_by_role("button", name="Reset to the example").click()
    assert out.locator("td").first.inner_text() == "0.814"


def test_worked_example_with_huge_scores_divides_no_infinities(page) -> None:
    _open(page, "/xp/worked-example/")
    fig = page.locator('[data-xp="worked-example"]')
    fig.get_by_label("Q row 1, column 1").fill("2000")  # a score of 1000 once divided by 2
    check = fig.locator('[data-out="check"]')
    expect(check.locator("p[data-stable]")).to_be_visible()
    text = check.inner_text()
    assert "∞ / ∞ =" not in text and "= ∞" not in text, text
    assert "the weights come from the differences" in text
    weights = [
        float(w) for w in fig.locator('[data-out-matrix="weights"] td').all_inner_texts()[:3]
    ]
    assert abs(sum(weights) - 1) < 0.002, weights
    for w in weights:  # the check quotes the weights of the matrix
        assert f"= {w:.3f}" in text, (w, text)
    _shot(fig, "worked-example-huge-scores")


def test_figures_read_without_javascript(browser, live_server) -> None:
    context = browser.new_context(java_script_enabled=False, base_url=live_server.url)
    page = context.new_page()
    page.goto("/xp/")
    text = page.locator('[data-xp="worked-example"]').inner_text()
    for number in ("0.506", "0.186", "0.307", "0.384", "0.233", "0.814", "0.767", "0.616"):
        assert number in text
    assert "5.367" in text
    # Each interactive figure says in words what it would show; its controls stay hidden.
    assert page.locator(".xp-nojs:visible").count() == 4
    assert page.locator('input[type="range"]:visible').count() == 0
    context.close()


def test_all_explorables_on_one_page(page) -> None:
    _open(page, "/xp/")
    page.wait_for_function("document.querySelectorAll('[data-mounted]').length === 5")
    assert page.locator(".xp-nojs:visible").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explorables-all.png"), full_page=True)


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        ("attention", "missing-scale"),
        ("attention", "scale-by-d"),
        ("attention", "correct"),
        ("multi-head-attention", "scale-by-model-width"),
        ("softmax", "unstable-softmax"),
    ],
)
def test_submission_plots(page, kind: str, code: str) -> None:
    _open(page, f"/xp-plots/{kind}/{code}/")
    section = page.locator("[data-submission-plots]")
    # Two heatmaps side by side, each cell with its value.
    assert section.locator('[data-chart="student"] .xp-cell').count() == 36
    assert section.locator('[data-chart="reference"] .xp-cell').count() == 36
    assert section.locator('[data-chart="reference"] svg title').first.text_content()
    if kind != "softmax":
        assert section.locator('[data-chart="saturation"] svg polyline').count() == 3
    box = section.locator("[data-misconception]")
    if code == "correct":
        assert box.is_hidden()
    else:
        assert box.is_visible()
        assert code in box.inner_text()
    if code == "scale-by-d":
        assert box.locator("svg[role=img]").count() == 1  # the near-uniform weights
    _shot(section, f"submission-plots-{kind}-{code}")


def test_softmax_backward_plots_show_the_gradient_vanish(page) -> None:
    _open(page, "/xp-plots/softmax_backward/backward-vanishing-hidden/")
    section = page.locator("[data-submission-plots]")
    # The worked example's 3 x 3 gradient, signed colours, beside the reference's.
    assert section.locator('[data-chart="student"] .xp-cell').count() == 9
    assert (
        section.locator('[data-chart="reference"] svg title')
        .first.text_content()
        .startswith("Gradient of")
    )
    # The largest entry against the score scale: the reference's and the clipped student's.
    assert section.locator('[data-chart="vanishing"] svg polyline').count() == 2
    box = section.locator("[data-misconception]")
    assert box.is_visible() and "backward-vanishing-hidden" in box.inner_text()
    _shot(section, "submission-plots-softmax_backward-vanishing")


def test_demonstration_plots_draw_the_curve_without_a_heatmap(page) -> None:
    _open(page, "/xp-plots/demonstration/missing-scale/")
    section = page.locator("[data-submission-plots]")
    # The function returns four numbers, no weights: no heatmap, the saturation curve alone.
    assert section.locator('[data-section="example"]').count() == 0
    assert section.locator('[data-chart="saturation"] svg polyline').count() == 3
    box = section.locator("[data-misconception]")
    assert box.is_visible() and "missing-scale" in box.inner_text()
    _shot(section, "submission-plots-demonstration-missing-scale")


def test_explainer_page_hosts_the_explorables(page, seed_content: None) -> None:
    """The real page (questions:explainer) with its four figures, once seeded."""
    page.goto("/explainer/")
    page.wait_for_function("document.querySelectorAll('figure[data-xp][data-mounted]').length >= 4")
    for name in ("variance", "saturation", "sqrt-vs-d", "judges"):
        assert page.locator(f'figure[data-xp="{name}"]').count() == 1, name
    fig = page.locator('figure[data-xp="saturation"]')
    _set_range(fig.locator('input[type="range"]'), "10")
    expect(fig.locator('[data-out="maxGrad"]')).to_have_text("5.4×10⁻⁵")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explainer-page.png"), full_page=True)
    for name in ("variance", "judges"):
        _shot(page.locator(f'figure[data-xp="{name}"]'), f"explainer-{name}")


def test_submission_plots_swapped_in_by_htmx(page) -> None:
    """On the site the verdict arrives by an htmx outerHTML swap; the plots must still draw."""
    page.goto("/xp-plots-htmx/attention/scale-by-d/")
    page.wait_for_selector("[data-submission-plots][data-mounted]")
    section = page.locator("[data-submission-plots]")
    expect(section.locator('[data-chart="student"] .xp-cell')).to_have_count(36)
    expect(section.locator("[data-misconception]")).to_be_visible()
