"""Test settings: the real settings, read with development defaults from the environment."""

import os

os.environ.setdefault("DEBUG", "true")
os.environ.setdefault("SECRET_KEY", "tests-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz")
# The pipeline tests start their own Redis on this port (and restart it); nothing else here
# needs a broker, and publishing to a port with nothing on it fails fast.
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6391/0")

from quizsite.settings import *  # noqa: F403
from quizsite.settings import DATABASES

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast users in tests

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not :memory:, so the real Celery worker the pipeline tests start can open it;
    # one per test process, so two suites running at once don't share it.
    DATABASES["default"]["TEST"] = {"NAME": f"/tmp/attention-quiz-test-{os.getpid()}.sqlite3"}
