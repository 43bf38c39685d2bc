"""End-to-end: the ten-minute demonstration trains both heads live on the explainer page.

The reader changes the head size, the figure trains again, and both runs' numbers appear as
text: the same numbers the numpy reference (explorables/train_demo.py) computes.
"""

# ruff: noqa: RUF001, RUF002 - the figure prints signs and superscripts on purpose

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

playwright_sync = pytest.importorskip("playwright.sync_api")
expect = playwright_sync.expect

from explorables import train_demo as T  # noqa: E402 - after the importorskip

pytestmark = pytest.mark.e2e

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TRAINING_TIMEOUT_MS = 60_000  # a few seconds alone; the CI machine is shared


def _set_range(locator, value: str) -> None:
    """Move a range input the way a user's drag does: set the value and fire input."""
    locator.evaluate(
        "(el, v) => { el.value = v; el.dispatchEvent(new Event('input', {bubbles: true})); }",
        value,
    )


def _wait_done(fig, d_k: int, seed: int) -> None:
    expect(fig).to_have_attribute("data-state", "done", timeout=TRAINING_TIMEOUT_MS)
    expect(fig).to_have_attribute("data-dk", str(d_k))
    expect(fig).to_have_attribute("data-seed", str(seed))


def _shown(fig, name: str) -> str:
    return fig.locator(f'[data-out="{name}"]').first.inner_text().replace("−", "-")


def _sci(x: float) -> str:
    """demonstration-widget.mjs's sci(): plain from 0.01 to 100, else "8.4 × 10⁻⁴"."""
    if 0.01 <= abs(x) < 100:
        return f"{x:.2f}" if abs(x) >= 1 else f"{x:.3f}"
    return T.format_sci(x)


def _assert_matches_numpy(fig, d_k: int, seed: int) -> None:
    """Once trained, the text beside the plots, the table's last row and the sentence under
    them give one set of numbers for the end of the run: the numpy run's means of its last
    LAST steps, with the same seed."""
    history = T.train(T.Config(d_k=d_k, seed=seed))
    assert _shown(fig, "numbersAt") == f"means of the last {T.LAST} steps"
    last_row = fig.locator("[data-table] tbody tr").last
    cells = [c.replace("−", "-") for c in last_row.locator("th, td").all_text_contents()]
    assert cells[0] == f"last {T.LAST}"
    summary = _shown(fig, "summary")
    for k, (run, suffix) in enumerate((("scaled", "Scaled"), ("unscaled", "Unscaled"))):
        end = T.summarise(history[run])
        loss = f"{end.loss:.3f}"
        assert _shown(fig, f"loss{suffix}") == loss == cells[1 + k], run
        assert _shown(fig, f"acc{suffix}") == f"{end.accuracy:.0%}" == cells[3 + k], run
        assert _shown(fig, f"ent{suffix}") == f"{end.entropy:.3f}" == cells[5 + k], run
        assert _shown(fig, f"gradQ{suffix}") == _sci(end.grad_q) == cells[7 + k], run
        assert _shown(fig, f"gradK{suffix}") == _sci(end.grad_k) == cells[9 + k], run
        assert loss in summary, (run, summary)


def test_the_demonstration_trains_both_heads_and_follows_the_head_size(
    page, js_errors: list[str]
) -> None:
    console_errors: list[str] = []
    page.on(
        "console",
        lambda m: console_errors.append(m.text)
        if m.type == "error" and not m.text.startswith("Failed to load resource")
        else None,
    )
    # Resource failures by URL instead (a missing favicon is not the figure's business).
    page.on(
        "response",
        lambda r: console_errors.append(f"{r.status} {r.url}")
        if r.status >= 400 and not r.url.endswith("/favicon.ico")
        else None,
    )
    page.goto("/explainer/#demonstration")
    fig = page.locator('figure#demonstration[data-xp="demonstration"]')
    expect(fig).to_have_attribute("data-mounted", "true")
    expect(fig.locator(".xp-nojs")).to_be_hidden()

    # It trains by itself at d_k = 64, seed 0: both runs' numbers are text.
    _wait_done(fig, 64, 0)
    _assert_matches_numpy(fig, 64, 0)
    ARTIFACTS.mkdir(exist_ok=True)
    page_y = "el => el.getBoundingClientRect().top + window.scrollY"  # not the viewport's
    top = page.locator("h2", has_text="Watch it stall").evaluate(page_y)
    bottom = page.locator("h2", has_text="Why √d and not d").evaluate(page_y)
    page.screenshot(
        path=str(ARTIFACTS / "explainer-demonstration.png"),
        full_page=True,
        clip={"x": 0, "y": top - 10, "width": 1280, "height": bottom - top},
    )
    expect(fig.locator('[data-out="summary"]')).to_contain_text("At dₖ = 64")
    expect(fig.locator('[data-out="summary"]')).to_contain_text("without it the loss stays at")
    expect(fig.locator("[data-table] tbody tr")).to_have_count(len(T.REPORT_STEPS) + 1)
    for chart in ("loss", "entropy", "grad"):
        svg = fig.locator(f'[data-chart="{chart}"] svg[role="img"]')
        expect(svg).to_have_count(1)
        assert re.search(r"\d", svg.locator("desc").text_content()), chart  # numbers, not pixels
        assert svg.locator("polyline").count() >= 2, chart  # both runs drawn

    # The reader picks d_k = 256: it trains again, in a few seconds, and stalls harder.
    started = time.monotonic()
    _set_range(fig.locator('input[data-role="dk"]'), "4")
    expect(fig.locator('output[data-out="dk"]')).to_have_text("256")
    expect(fig.locator('input[data-role="dk"]')).to_have_attribute("aria-valuetext", "dₖ = 256")
    _wait_done(fig, 256, 0)
    seconds = time.monotonic() - started
    assert re.search(r"Done: 300 steps of both models in [\d.]+ s\.", _shown(fig, "status"))
    _assert_matches_numpy(fig, 256, 0)
    assert float(_shown(fig, "lossUnscaled")) > 10 * float(_shown(fig, "lossScaled"))
    fig.screenshot(path=str(ARTIFACTS / "demonstration-256.png"), animations="disabled")

    # At d_k = 16 the page says honestly that the unscaled head still learns.
    _set_range(fig.locator('input[data-role="dk"]'), "0")
    _wait_done(fig, 16, 0)
    _assert_matches_numpy(fig, 16, 0)
    expect(fig.locator('[data-out="summary"]')).to_contain_text("still learns")

    # Another seed is another run, the same in the browser and in numpy.
    fig.locator('input[data-role="seed"]').fill("3")
    fig.locator('input[data-role="seed"]').dispatch_event("change")
    _wait_done(fig, 16, 3)
    _assert_matches_numpy(fig, 16, 3)
    fig.screenshot(path=str(ARTIFACTS / "demonstration-16-seed3.png"), animations="disabled")

    assert js_errors == [] and console_errors == []
    print(f"d_k = 256 trained and drawn in {seconds:.1f} s")  # shown with -s
