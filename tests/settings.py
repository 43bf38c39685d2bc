"""Test settings: the real settings, read with development defaults from the environment."""

import os
import socket

os.environ.setdefault("DEBUG", "true")
os.environ.setdefault("SECRET_KEY", "tests-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The pipeline tests start their own Redis on this port (and restart it); nothing else here
# needs a broker, and publishing to a port with nothing on it fails fast. A port per test
# session keeps two runs (or a worker left over from a killed run) apart.
os.environ.setdefault("REDIS_URL", f"redis://127.0.0.1:{_free_port()}/0")

# API throttles count in a cache that outlives each test; tests that test them set their own.
# A connection per request, as before: a test database is dropped at the end, which a
# connection kept open by a live server's thread would prevent (PostgreSQL).
os.environ.setdefault("CONN_MAX_AGE", "0")
os.environ.setdefault("THROTTLE_ANON", "100000/min")
os.environ.setdefault("THROTTLE_USER", "100000/min")
os.environ.setdefault("THROTTLE_SIGNUP", "100000/min")
os.environ.setdefault("THROTTLE_ANSWERS", "100000/min")
os.environ.setdefault("THROTTLE_ANSWERS_ANON", "100000/min")
os.environ.setdefault("THROTTLE_TOKEN", "100000/min")
os.environ.setdefault("THROTTLE_RUNS", "100000/min")

from quizsite.settings import *  # noqa: E402, F403
from quizsite.settings import DATABASES  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast users in tests

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not :memory:, so the real Celery worker the pipeline tests start can open it;
    # one per test process, so two suites running at once don't share it.
    DATABASES["default"]["TEST"] = {"NAME": f"/tmp/attention-quiz-test-{os.getpid()}.sqlite3"}

# One cache per test process: most tests don't test sharing, and tests/common/test_throttles.py runs
# the shared case against a Redis of its own. Cleared before each test (tests/conftest.py).
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Axes warns that a per-process cache doesn't share lockouts: true, and production uses Redis.
SILENCED_SYSTEM_CHECKS = ["axes.W001"]
