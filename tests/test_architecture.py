"""The layer contracts in pyproject.toml hold, and a broken one fails `lint-imports`.

The broken cases run on a copy of the packages in a temporary folder, never on the tree itself.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PACKAGES = (
    "lti",
    "courses",
    "grader",
    "questions",
    "quizsite",
    "accounts",
    "common",
    "explorables",
    "tests/__init__.py",
    "tests/import_contracts.py",
)


def _lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _copy_tree(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for name in PACKAGES:
        source, target = ROOT / name, tmp_path / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    return tmp_path


def test_the_contracts_hold_on_the_tree() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("grader/engine/reference.py", "import django", "import no Django"),
        ("grader/engine/diagnosis.py", "import grader.models", "import no Django"),
        ("grader/engine/kinds/softmax.py", "import grader.engine.trials", "registry"),
        ("grader/engine/trial_args.py", "import grader.engine.kinds", "below the registry"),
        ("grader/engine/reference.py", "from grader.engine import kinds", "below the registry"),
        ("grader/engine/sandbox/inside/protocol.py", "import grader.engine.limits", "only the"),
        ("grader/engine/sandbox/inside/layers.py", "import requests", "only the"),
        ("grader/views/exercises.py", "import grader.tasks", "never import tasks"),
        ("questions/views.py", "import quizsite.settings", "above common"),
        ("accounts/roles.py", "import grader.models", "above common"),
        ("common/fields.py", "import accounts.roles", "above common"),
        ("grader/services/queue.py", "from grader import tasks", "never import tasks"),
        # grader and questions tell courses by a signal, never by importing it.
        ("grader/services/queue.py", "import courses.signals", "above common"),
        ("questions/services.py", "import courses.models", "above common"),
    ],
)
def test_a_broken_contract_fails(tmp_path: Path, module: str, line: str, contract: str) -> None:
    tree = _copy_tree(tmp_path)
    path = tree / module
    path.write_text(path.read_text() + f"\n{line}  # noqa\n")
    result = _lint(tree)
    assert result.returncode != 0
    # A contract with ignored imports says so after its verdict: "BROKEN (3 ignored imports)".
    broken = [row for row in result.stdout.splitlines() if re.search(r" BROKEN( \(|$)", row)]
    assert len(broken) == 1 and contract in broken[0], result.stdout
