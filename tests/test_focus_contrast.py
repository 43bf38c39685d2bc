"""The focus ring has at least 3:1 contrast against every background it is drawn on (WCAG 2.2,
1.4.11 non-text contrast), read from the colours in static/css/site.css."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SITE_CSS = Path(__file__).resolve().parents[1] / "static" / "css" / "site.css"


def _srgb_luminance(hex_colour: str) -> float:
    value = hex_colour.lstrip("#")
    if len(value) == 3:
        value = "".join(c * 2 for c in value)
    channels = [int(value[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((_srgb_luminance(a), _srgb_luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _variables() -> dict[str, str]:
    return dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{3,6})\b", SITE_CSS.read_text()))


def test_contrast_formula_matches_known_values() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#f0b400", "#ffffff") < 3  # the amber ring it replaced
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


def test_every_focus_rule_draws_the_focus_colour() -> None:
    css = SITE_CSS.read_text()
    rules = re.findall(r"([^{}]*:focus(?:-visible|-within)[^{}]*)\{([^}]*)\}", css)
    outlined = [(sel.strip(), body) for sel, body in rules if "outline" in body]
    assert outlined, "no focus outline at all"
    for selector, body in outlined:
        if "outline-color: #fff" in body:  # the skip link, drawn on the accent
            continue
        assert "var(--focus)" in body, selector
    for element in (
        "a:focus-visible",
        "button:focus-visible",
        "input:focus-visible",
        "summary:focus-visible",
        ".code-editor:focus-within",
    ):
        assert element in css


@pytest.mark.parametrize("background", ["bg", "panel", "#fff8e6", "#ffffff"])
def test_the_focus_ring_stands_out_on_every_background(background: str) -> None:
    colours = _variables()
    ring = colours["focus"]
    colour = colours.get(background, background)
    assert contrast(ring, colour) >= 3, (ring, colour)


def test_the_skip_links_white_ring_stands_out_on_the_accent() -> None:
    assert contrast("#ffffff", _variables()["accent"]) >= 3
