"""The documentation stays a manual: a README a newcomer can read, links that lead somewhere,
decision records in their shape, and performance figures whose commands exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 350

# Every Markdown file that links to others in the tree.
PAGES = sorted(
    {
        README,
        ROOT / "grader" / "README.md",
        ROOT / "grader" / "engine" / "sandbox" / "README.md",
        *DOCS.rglob("*.md"),
    }
)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _relative_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)  # no code blocks
    return [
        target
        for target in LINK.findall(text)
        if not re.match(r"[a-z][a-z0-9+.-]*:", target) and not target.startswith("#")
    ]


def test_the_readme_is_short_enough_to_read() -> None:
    lines = README.read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail to docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = [
        target
        for target in _relative_links(page)
        if not (page.parent / target.split("#", 1)[0]).exists()
    ]
    assert not broken, f"{page.relative_to(ROOT)} links to missing files: {broken}"


def test_every_decision_record_is_short_and_indexed() -> None:
    index = (DOCS / "decisions" / "README.md").read_text()
    records = sorted((DOCS / "decisions").glob("[0-9][0-9][0-9][0-9]-*.md"))
    assert records
    for record in records:
        text = record.read_text()
        assert record.name in index, f"{record.name} is not in docs/decisions/README.md"
        for part in ("**Context.**", "**Decision.**", "**Consequences.**"):
            assert part in text, f"{record.name} has no {part}"
        assert 10 <= text.count("\n") <= 30, f"{record.name}: keep a record to 10-30 lines"


def test_every_performance_command_names_something_that_exists() -> None:
    text = (DOCS / "performance.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"make (bench-[a-z-]+)", text))
    modules = set(re.findall(r"-m bench\.([a-z_]+)", text))
    assert targets and modules
    for target in targets:
        assert re.search(rf"^{target}:", makefile, flags=re.MULTILINE), f"no make {target}"
    for module in modules:
        assert (ROOT / "bench" / f"{module}.py").exists(), f"no bench/{module}.py"


_CHECK_ROW = re.compile(r"^\| `([a-z0-9-]+)` \| [^|]+ \| (.+) \|$", re.MULTILINE)


def test_the_checks_table_states_each_checks_real_defaults() -> None:
    import json

    from grader.engine.checks import CHECKS

    table = (ROOT / "grader" / "README.md").read_text().split("## Checks", 1)[1]
    rows = dict(_CHECK_ROW.findall(table))
    assert set(rows) == set(CHECKS)
    for name, cell in rows.items():
        defaults = {p.name: p.default for p in CHECKS[name].params}
        stated = cell.strip("`")
        for item in re.findall(r"(\w+)(?:=(\[(?:[^\[\]]|\[[^\[\]]*\])*\]|[^,\s]+))?", stated):
            key, value = item
            if key == "none":
                assert not defaults, name
                continue
            assert key in defaults, (name, key)
            if value:
                stated_value, default = json.loads(value), defaults[key]
                if isinstance(default, float):
                    stated_value = pytest.approx(stated_value)
                assert default == stated_value, (name, key, value)
