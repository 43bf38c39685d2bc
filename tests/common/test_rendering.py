"""Instructor Markdown is rendered and sanitised; $math$ survives for KaTeX."""

from __future__ import annotations

import pytest

from common.rendering import render_inline, render_markdown, render_segments


def test_script_is_removed() -> None:
    html = render_markdown("Hello <script>alert('x')</script> world")
    assert "<script" not in html and "alert(" not in html
    assert "Hello" in html and "world" in html


def test_img_onerror_is_removed() -> None:
    html = render_markdown('<img src="x" onerror="alert(1)"> and <b onclick="alert(2)">bold</b>')
    assert "onerror" not in html and "onclick" not in html and "<img" not in html
    assert "<b>bold</b>" in html


@pytest.mark.parametrize(
    "source",
    [
        "[click](javascript:alert(1))",
        '<a href="javascript:alert(1)">click</a>',
        '<a href="JaVaScRiPt:alert(1)">click</a>',
        "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    ],
)
def test_javascript_links_are_neutralised(source: str) -> None:
    html = render_markdown(source).lower()
    assert "javascript:" not in html and "data:" not in html
    assert "click" in html


def test_safe_links_survive_with_rel() -> None:
    html = render_markdown("[exercise](/exercises/stable-softmax/)")
    assert 'href="/exercises/stable-softmax/"' in html and "noopener" in html


def test_math_passes_through_untouched() -> None:
    html = render_markdown("Scores $q_i k_i$ over $\\sqrt{d_k}$, and $$\\frac{a_1}{b_2}$$")
    assert "$q_i k_i$" in html  # not turned into <em>
    assert "$\\sqrt{d_k}$" in html
    assert "$$\\frac{a_1}{b_2}$$" in html


def test_markup_inside_math_is_escaped() -> None:
    html = render_markdown("$a < b <script>alert(1)</script>$")
    assert "<script" not in html
    assert "$a &lt; b &lt;script&gt;alert(1)&lt;/script&gt;$" in html


def test_segments_split_at_known_explorables_only() -> None:
    segments = render_segments(
        "Intro\n\n[[explorable:variance]]\n\nMiddle\n\n[[explorable:evil]]\n\nEnd"
    )
    assert [s.explorable for s in segments] == ["", "variance", "", ""]
    assert segments[1].template == "explorables/variance.html"
    assert "evil" not in "".join(s.html for s in segments)


def test_inline_has_no_paragraph() -> None:
    assert render_inline("The *division*") == "The <em>division</em>"


_ATTRIBUTE_VECTORS = [
    # The audit's finding: a math placeholder inside a link target came back unescaped.
    '[first]($x" autofocus onfocus="alert(document.domain)" x="$)',
    '[t](https://example.com "$x" onmouseover="alert(1)$")',
    '![$x" onerror="alert(1)$]($y$)',
    "[a]($x' onclick='alert(1)$)",
    '<a href="$x" onclick="alert(1)$">raw</a>',
]


@pytest.mark.parametrize("source", _ATTRIBUTE_VECTORS)
def test_math_inside_a_tag_cannot_add_attributes(source: str) -> None:
    html = render_markdown(source).lower()
    for needle in ("onfocus", "onmouseover", "onerror", "onclick", "autofocus"):
        # The words may survive as escaped text, never as an attribute of a tag.
        for tag in html.split("<")[1:]:
            assert needle not in tag.split(">")[0], html


def test_math_in_a_code_span_and_quotes_in_math_stay_text() -> None:
    html = render_markdown("`$x$` and $a \"b\" 'c'$")
    assert "<code>$x$</code>" in html
    assert "$a &quot;b&quot; &#x27;c&#x27;$" in html
