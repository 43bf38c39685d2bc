"""Django's {# #} comments are single-line; a multi-line one is printed on the page."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_template_has_a_multiline_short_comment() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in ROOT.glob("**/templates/**/*.html")
        if ".venv" not in path.parts
        and "node_modules" not in path.parts
        and any("\n" in m for m in re.findall(r"\{#(.*?)#\}", path.read_text(), re.S))
    ]
    assert offenders == []
