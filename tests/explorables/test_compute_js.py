"""Runs the node tests of the explorables' numbers, so `make test` (pytest) covers them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def test_node_unit_tests_pass() -> None:
    node = shutil.which("node") or "/usr/bin/node"
    if not Path(node).exists():
        pytest.skip("node is not installed")
    tests = sorted(str(p.relative_to(ROOT)) for p in HERE.glob("*.test.mjs"))
    assert tests, "no node tests found"
    run = subprocess.run(
        [node, "--test", *tests],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, f"node --test failed:\n{run.stdout[-6000:]}\n{run.stderr[-2000:]}"
    assert "# fail 0" in run.stdout
