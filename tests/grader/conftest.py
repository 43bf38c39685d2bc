"""Fixtures of the grader tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def sandbox() -> Iterator[object]:
    """A real, warm SandboxExecutor for the module's tests of code run end to end."""
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed; `make install` installs it")
    from grader.engine.sandbox import SandboxExecutor

    executor = SandboxExecutor()
    try:
        yield executor
    finally:
        executor.close()
