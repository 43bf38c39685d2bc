"""Test settings: the real settings, read with development defaults from the environment."""

import os

os.environ.setdefault("DEBUG", "true")
os.environ.setdefault("SECRET_KEY", "tests-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz")

from quizsite.settings import *  # noqa: E402, F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast users in tests
