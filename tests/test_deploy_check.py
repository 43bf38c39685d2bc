"""`manage.py check --deploy` passes with production settings."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_check_deploy_passes_with_production_env() -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "quizsite.settings",
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "quiz.example.com",
    }
    # Production must not inherit development relaxations from the test run's environment
    # (the e2e conftest sets DJANGO_ALLOW_ASYNC_UNSAFE for Playwright, in this process).
    for name in ("SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "DJANGO_ALLOW_ASYNC_UNSAFE"):
        env.pop(name, None)
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key() -> None:
    dotenv = ROOT / ".env"
    if dotenv.exists() and "SECRET_KEY=" in dotenv.read_text().replace("SECRET_KEY=\n", ""):
        pytest.skip("a local .env provides SECRET_KEY")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "quizsite.settings",
        "DEBUG": "false",
        "ALLOWED_HOSTS": "quiz.example.com",
    }
    env.pop("SECRET_KEY", None)
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr
