"""Instructor Markdown to safe HTML, keeping $math$ intact for KaTeX.

Math is cut out before Markdown runs (so `$q_i k_i$` is not read as emphasis), the HTML is
sanitised with nh3, and the math goes back in HTML-escaped, in text nodes only: KaTeX's
auto-render reads text content, so escaped math renders while nothing in it can become markup,
and math that Markdown put inside a tag (a link target, a title) is dropped.
"""

from __future__ import annotations

import html
import re
import secrets
from dataclasses import dataclass
from functools import lru_cache

import markdown
import nh3
from markdown.extensions.toc import slugify as _toc_slugify

# The interactive views another engineer builds under templates/explorables/.
EXPLORABLES = ("variance", "saturation", "sqrt_vs_d", "judges", "worked_example", "demonstration")
_EXPLORABLE_LINE = re.compile(r"^[ \t]*\[\[explorable:([a-z_]+)\]\][ \t]*$", re.MULTILINE)
_MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$(?!\s)[^$\n]+?(?<!\s)\$", re.DOTALL)

_TAGS = (nh3.ALLOWED_TAGS - {"img", "area", "map"}) | {"figure", "figcaption"}
_ATTRIBUTES: dict[str, set[str]] = {
    **{tag: set(attrs) for tag, attrs in nh3.ALLOWED_ATTRIBUTES.items() if tag in _TAGS},
    "a": {"href", "title"},
    "h2": {"id"},
    "h3": {"id"},
    "code": {"class"},
    "th": {"align", "scope"},
    "td": {"align"},
}
_URL_SCHEMES = {"http", "https", "mailto"}


_PLACEHOLDER = re.compile(r"MATH[0-9a-f]{8}X\d+X", re.IGNORECASE)


def _heading_id(value: str, separator: str) -> str:
    # Headings with math would otherwise get the placeholder (random per call) in their id.
    return _toc_slugify(_PLACEHOLDER.sub("", value), separator)


@dataclass(frozen=True)
class Segment:
    """Either sanitised HTML or the name of an explorable to include at that place."""

    html: str = ""
    explorable: str = ""

    @property
    def template(self) -> str:
        return f"explorables/{self.explorable}.html" if self.explorable else ""


def sanitize(raw_html: str) -> str:
    return nh3.clean(
        raw_html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes=_URL_SCHEMES,
        link_rel="noopener noreferrer",
    )


# Rendering is a pure function of the text, and the texts are instructors' content read on
# every page view: each process keeps the latest results (an edit is a new text, so nothing
# goes stale). Longer texts are rendered each time rather than held.
RENDER_CACHE_SIZE = 1024
RENDER_CACHE_MAX_CHARS = 50_000


def render_markdown(text: str) -> str:
    """Markdown (with $math$) to sanitised HTML."""
    if len(text) <= RENDER_CACHE_MAX_CHARS:
        return _render_markdown_kept(text)
    return _render_markdown(text)


@lru_cache(maxsize=RENDER_CACHE_SIZE)
def _render_markdown_kept(text: str) -> str:
    return _render_markdown(text)


def _render_markdown(text: str) -> str:
    token = secrets.token_hex(4)
    stash: list[str] = []

    def keep(match: re.Match[str]) -> str:
        stash.append(match.group(0))
        return f"MATH{token}X{len(stash) - 1}X"

    protected = _MATH.sub(keep, text)
    rendered = markdown.markdown(
        protected,
        extensions=["fenced_code", "tables", "sane_lists", "toc", "md_in_html"],
        extension_configs={"toc": {"permalink": False, "slugify": _heading_id}},
        output_format="html",
    )
    clean = sanitize(rendered)
    placeholder = re.compile(rf"MATH{token}X(\d+)X")

    def restore(part: re.Match[str]) -> str:
        if part.group(0).startswith("<"):
            # Inside a tag (a link target, a title): math is not text there, and putting it
            # back could close the attribute and add a handler. It is dropped.
            return placeholder.sub("", part.group(0))
        # A text node: escaped, quotes included, so nothing in the math becomes markup.
        return placeholder.sub(
            lambda m: html.escape(stash[int(m.group(1))], quote=True), part.group(0)
        )

    # Sanitised HTML is well formed: every "<" starts a tag and text never holds a raw "<".
    return re.sub(r"<[^>]*>|[^<]+", restore, clean)


def render_segments(text: str) -> list[Segment]:
    """Split at [[explorable:NAME]] lines; unknown names are dropped, not rendered raw."""
    segments: list[Segment] = []
    position = 0
    for match in _EXPLORABLE_LINE.finditer(text):
        chunk = text[position : match.start()]
        if chunk.strip():
            segments.append(Segment(html=render_markdown(chunk)))
        if match.group(1) in EXPLORABLES:
            segments.append(Segment(explorable=match.group(1)))
        position = match.end()
    tail = text[position:]
    if tail.strip():
        segments.append(Segment(html=render_markdown(tail)))
    return segments


def strip_markers(text: str) -> str:
    """The Markdown without explorable markers, for places that cannot include templates."""
    return _EXPLORABLE_LINE.sub("", text)


def render_inline(text: str) -> str:
    """Markdown for a short label or statement: no wrapping paragraph."""
    rendered = render_markdown(text).strip()
    if rendered.startswith("<p>") and rendered.endswith("</p>") and rendered.count("<p>") == 1:
        return rendered[3:-4]
    return rendered
