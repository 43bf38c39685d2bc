"""A real Redis and a real Celery worker (with embedded beat), started for the pipeline tests.

Not eager mode: the worker is a separate process that reads the test database and runs the
sandbox, exactly as in production.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
# tests/settings.py points REDIS_URL (and so the test process's Celery app) here. One port per
# test session, so a worker left over from a killed run can never take this run's tasks.
REDIS_URL = settings.CELERY_BROKER_URL
REDIS_PORT = int(REDIS_URL.rsplit(":", 1)[1].split("/")[0])
LOGS = ROOT / "test-artifacts"


def golden(name: str, exercise: str = "scaled-dot-product-attention") -> str:
    """A submission of the golden suite (tests/golden), e.g. golden("correct_matmul")."""
    return (ROOT / "tests" / "golden" / exercise / f"{name}.py").read_text()


def wait_until(predicate: Callable[[], object], *, timeout: float, step: float = 0.1) -> object:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not met within {timeout}s")
        time.sleep(step)


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Redis:
    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        server = shutil.which("redis-server")
        assert server, "redis-server is missing: `make test` installs it"
        self.proc = subprocess.Popen(
            [
                server,
                "--port",
                str(REDIS_PORT),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import redis

        client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=0.5)

        def up() -> bool:
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        wait_until(up, timeout=10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()  # like a crash: nothing is saved (--save "" anyway)
            self.proc.wait(5)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


class Worker:
    def __init__(self, name: str = "test") -> None:
        self.name = name
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = LOGS / f"celery-{name}.log"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
        env.update(
            DJANGO_SETTINGS_MODULE="quizsite.settings",
            DEBUG="true",
            SECRET_KEY=settings.SECRET_KEY,
            DATABASE_URL=database_url(),
            REDIS_URL=REDIS_URL,
            # Short clocks so faults resolve in seconds. The lease must stay above the time
            # limit, as in production.
            CELERY_TASK_SOFT_TIME_LIMIT="20",
            CELERY_TASK_TIME_LIMIT="25",
            GRADER_LEASE_SECONDS="30",
            GRADER_SWEEP_SECONDS="1",
            GRADER_REQUEUE_AFTER_SECONDS="2",
            GRADER_MAX_ATTEMPTS="3",
        )
        return env

    def start(self, *, lease_seconds: float | None = None) -> None:
        LOGS.mkdir(exist_ok=True)
        env = self.env()
        if lease_seconds is not None:
            env["GRADER_LEASE_SECONDS"] = str(lease_seconds)
            env["CELERY_TASK_SOFT_TIME_LIMIT"] = str(max(1, int(lease_seconds) - 2))
            env["CELERY_TASK_TIME_LIMIT"] = str(max(2, int(lease_seconds) - 1))
        offset = self.log.stat().st_size if self.log.exists() else 0
        log = self.log.open("ab")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "quizsite",
                "worker",
                "-B",
                "--concurrency=1",
                "--loglevel=INFO",
                f"--hostname={self.name}@%h",
                f"--schedule=/tmp/celerybeat-{self.name}-{os.getpid()}",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_until(lambda: b"ready." in self.log.read_bytes()[offset:], timeout=60, step=0.2)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None
