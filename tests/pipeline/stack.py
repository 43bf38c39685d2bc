"""A real Redis and a real Celery worker (with embedded beat), started for the pipeline tests.

Not eager mode: the worker is a separate process that reads the test database and runs the
sandbox, exactly as in production.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def submit(client: Any, code: str, exercise: str = "scaled-dot-product-attention") -> int:
    """POST a submission through the API (a DRF APIClient); its id."""
    response = client.post("/api/submissions/", {"exercise": exercise, "code": code}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def wait_until(predicate: Callable[[], object], *, timeout: float, step: float = 0.1) -> object:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not met within {timeout}s")
        time.sleep(step)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


# The clocks of every test worker: short, so faults resolve in seconds. A test that measures
# recovery with the shipped defaults passes defaults=True instead.
TEST_CLOCKS = {
    "CELERY_TASK_SOFT_TIME_LIMIT": "20",
    "CELERY_TASK_TIME_LIMIT": "25",
    "GRADER_LEASE_SECONDS": "5",
    "GRADER_HEARTBEAT_SECONDS": "1",
    "GRADER_SWEEP_SECONDS": "1",
    "GRADER_REQUEUE_AFTER_SECONDS": "2",
    "GRADER_MAX_ATTEMPTS": "3",
}


def stack_env(*, defaults: bool = False, **overrides: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYTEST") and (k not in TEST_CLOCKS or not defaults)
    }
    env.update(
        DJANGO_SETTINGS_MODULE="quizsite.settings",
        DEBUG="true",
        SECRET_KEY=settings.SECRET_KEY,
        DATABASE_URL=database_url(),
        REDIS_URL=REDIS_URL,
    )
    if not defaults:
        env.update(TEST_CLOCKS)
    env.update(overrides)
    return env


class Worker:
    """A Celery worker (with embedded beat unless beat=False) consuming both queues."""

    def __init__(self, name: str = "test") -> None:
        self.name = name
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = LOGS / f"celery-{name}.log"
        self._offset = 0

    def start(
        self,
        *,
        defaults: bool = False,
        beat: bool = True,
        pid_namespace: bool = False,
        **env: str,
    ) -> None:
        """Start and wait until ready.

        pid_namespace runs the worker as pid 1 of a pid namespace of its own, as in a container:
        two such workers on one host have processes with the same pids.
        """
        LOGS.mkdir(exist_ok=True)
        self._offset = self.log.stat().st_size if self.log.exists() else 0
        log = self.log.open("ab")
        prefix = ["unshare", "--pid", "--fork", "--mount-proc"] if pid_namespace else []
        self.proc = subprocess.Popen(
            [
                *prefix,
                sys.executable,
                "-m",
                "celery",
                "-A",
                "quizsite",
                "worker",
                *(["-B", f"--schedule=/tmp/celerybeat-{self.name}-{os.getpid()}"] if beat else []),
                "-Q",
                "celery,sweeper",
                "--concurrency=1",
                "--loglevel=INFO",
                f"--hostname={self.name}@%h",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=ROOT,
            env=stack_env(defaults=defaults, **env),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_until(lambda: "ready." in self.output(), timeout=60, step=0.2)

    def output(self) -> str:
        """What this worker logged since its last start."""
        with self.log.open("rb") as f:
            f.seek(self._offset)
            return f.read().decode(errors="replace")

    def owns(self, pid: int) -> bool:
        """Whether pid (a host pid) is one of this worker's processes."""
        try:
            return self.proc is not None and os.getpgid(pid) == self.proc.pid
        except ProcessLookupError:
            return False

    def stop(self) -> None:
        """kill -9 of the whole worker: main process, pool, embedded beat, sandboxes."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None


class Gunicorn:
    """The site under gunicorn, started from the project directory as deployed: gunicorn reads
    gunicorn.conf.py there (its workers and timeouts) unless arguments say otherwise."""

    def __init__(self, name: str = "web") -> None:
        self.name = name
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = LOGS / f"gunicorn-{name}.log"
        self.url = ""

    def start(self, *args: str, **env: str) -> str:
        """Start, wait until it answers HTTP (any status), and return its base URL."""
        binary = shutil.which("gunicorn", path=str(Path(sys.executable).parent))
        assert binary, "gunicorn is missing from the virtualenv"
        LOGS.mkdir(exist_ok=True)
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [binary, "quizsite.wsgi", "--bind", f"127.0.0.1:{port}", *args],
            cwd=ROOT,
            env=stack_env(**env),
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

        def up() -> bool:
            assert self.proc is not None and self.proc.poll() is None, f"gunicorn died: {self.log}"
            try:
                with urllib.request.urlopen(f"{self.url}/", timeout=2):
                    return True
            except urllib.error.HTTPError:
                return True  # answering; what it answers is the test's business
            except (urllib.error.URLError, OSError):
                return False

        wait_until(up, timeout=60, step=0.2)
        return self.url

    def stop(self) -> None:
        """A graceful stop (SIGTERM to the arbiter), then kill -9 of whatever is left."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.proc = None


class Beat:
    """A standalone `celery beat`, as production runs it (the sweeper's scheduler)."""

    def __init__(self, name: str = "beat") -> None:
        self.name = name
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = LOGS / f"celery-{name}.log"
        self._offset = 0

    def start(self, **env: str) -> None:
        LOGS.mkdir(exist_ok=True)
        self._offset = self.log.stat().st_size if self.log.exists() else 0
        log = self.log.open("ab")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "quizsite",
                "beat",
                "--loglevel=INFO",
                f"--schedule=/tmp/celerybeat-{self.name}-{os.getpid()}",
            ],
            cwd=ROOT,
            env=stack_env(**env),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_until(lambda: "beat: Starting" in self.output(), timeout=60)

    def output(self) -> str:
        """What this beat logged since its last start."""
        with self.log.open("rb") as f:
            f.seek(self._offset)
            return f.read().decode(errors="replace")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None


def sandbox_runs(submission_id: int, *workers: Worker) -> int:
    """How many sandbox runs of this submission the workers logged (grader.services)."""
    line = f"submission {submission_id}: grading,"
    return sum(w.output().count(line) for w in workers)
