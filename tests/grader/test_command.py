"""`manage.py grade ... --json` in a subprocess, as other tools call it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "scaled-dot-product-attention"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    db = tmp_path_factory.mktemp("db") / "grade.sqlite3"
    environ = dict(
        os.environ,
        DATABASE_URL=f"sqlite:///{db}",
        DJANGO_SETTINGS_MODULE="quizsite.settings",
        DEBUG="true",
        SECRET_KEY="grade-command-test-key-0123456789abcdefghijklmnop",
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=environ, check=True
    )
    return environ


def run_grade(env, *args):
    return subprocess.run(
        [sys.executable, "manage.py", "grade", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_grade_json_lines(env, tmp_path):
    files = [
        str(GOLDEN / "correct_matmul.py"),
        str(GOLDEN / "missing_scale.py"),
        str(GOLDEN / "error_syntax.txt"),
        str(tmp_path / "missing.py"),
    ]
    result = run_grade(env, "scaled-dot-product-attention", *files, "--json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert [line["file"] for line in lines] == files
    for line in lines:
        assert set(line) == {"file", "status", "score", "checks", "diagnosis", "message"}
        assert 0.0 <= line["score"] <= 1.0
        for check in line["checks"]:
            assert set(check) == {"name", "passed", "message"}
    assert [line["status"] for line in lines] == ["passed", "failed", "error", "error"]
    assert lines[0]["score"] == 1.0 and lines[0]["diagnosis"] == []
    assert lines[1]["diagnosis"] == ["missing-scale"]
    saturation = next(c for c in lines[1]["checks"] if c["name"] == "saturation")
    assert not saturation["passed"] and "mean top weight" in saturation["message"]
    assert lines[2]["message"].startswith("Syntax error on line 4")


def test_same_seed_same_output_and_unknown_exercise(env):
    a = run_grade(
        env,
        "stable-softmax",
        str(ROOT / "tests/golden/stable-softmax/whole_array.py"),
        "--json",
        "--seed",
        "7",
    )
    b = run_grade(
        env,
        "stable-softmax",
        str(ROOT / "tests/golden/stable-softmax/whole_array.py"),
        "--json",
        "--seed",
        "7",
    )
    assert a.returncode == 0 and a.stdout == b.stdout
    missing = run_grade(env, "no-such-exercise", str(GOLDEN / "correct_matmul.py"), "--json")
    assert missing.returncode != 0
    assert "No exercise" in missing.stderr
