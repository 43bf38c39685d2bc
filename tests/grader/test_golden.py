"""The golden suite: student-style files graded through grade() and the real sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.engine.grading import grade
from grader.engine.misconceptions import CODES
from tests.grader.helpers import KIND_OF_SLUG, builtin_spec

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
EXPECTED = json.loads((GOLDEN / "expected.json").read_text())
CASES = [
    (slug, name, expected)
    for slug, files in EXPECTED.items()
    if not slug.startswith("_")
    for name, expected in files.items()
]


def test_every_golden_file_has_an_expectation_and_back():
    # Sources that do not parse end in .txt, so linters and formatters leave them alone.
    on_disk = {(p.parent.name, p.name) for ext in ("py", "txt") for p in GOLDEN.glob(f"*/*.{ext}")}
    listed = {(slug, name) for slug, name, _ in CASES}
    assert on_disk == listed
    assert set(KIND_OF_SLUG) == {slug for slug, _ in on_disk}


def test_every_misconception_has_a_golden_file():
    named = {code for _, _, e in CASES for code in e["diagnosis"]}
    assert named == set(CODES)


@pytest.mark.parametrize("slug,name,expected", CASES, ids=[f"{s}/{n}" for s, n, _ in CASES])
def test_golden(sandbox, slug, name, expected):
    code = (GOLDEN / slug / name).read_text()
    verdict = grade(spec=builtin_spec(KIND_OF_SLUG[slug]), code=code, seed=0, executor=sandbox)
    assert verdict.status == expected["status"], verdict.to_dict()
    assert list(verdict.diagnosis) == expected["diagnosis"], verdict.to_dict()
    if "message_startswith" in expected:
        assert verdict.message.startswith(expected["message_startswith"]), verdict.message
    if expected["status"] == "passed":
        assert verdict.score == 1.0
    if name == "correct_prints.py":
        assert "loading my attention" in verdict.stdout


@pytest.mark.parametrize("slug", sorted(KIND_OF_SLUG))
def test_validation_through_the_sandbox(sandbox, slug):
    from grader.engine.exercise_content import EXERCISES
    from grader.engine.validation import validate_spec

    data = next(e for e in EXERCISES if e["slug"] == slug)
    report = validate_spec(
        spec=builtin_spec(KIND_OF_SLUG[slug]),
        reference_source=data["reference_solution"],
        executor=sandbox,
    )
    assert report.reference_passed, report.reference.to_dict()
    assert report.uncaught == ()
    assert report.unnamed == ()
