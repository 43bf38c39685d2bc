"""Test settings: the real settings, read with development defaults from the environment."""

import os

os.environ.setdefault("DEBUG", "true")
os.environ.setdefault("SECRET_KEY", "tests-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz")
# The pipeline tests start their own Redis on this port (and restart it); nothing else here
# needs a broker, and publishing to a port with nothing on it fails fast.
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6391/0")

from quizsite.settings import *  # noqa: E402, F403
from quizsite.settings import DATABASES  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast users in tests

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not :memory:, so the real Celery worker the pipeline tests start can open it.
    DATABASES["default"]["TEST"] = {"NAME": "/tmp/attention-quiz-test.sqlite3"}
