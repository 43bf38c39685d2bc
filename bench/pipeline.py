"""End-to-end pipeline benchmark: starts the whole stack and measures it in one run.

    make bench-pipeline         (or: .venv/bin/python bench/pipeline.py [--burst 500])

Prints, each beside a baseline measured in the same run:
- HTTP submit -> stored verdict latency at idle (p50, p95), against the sandbox grade alone;
- sustained verdicts per second for a burst of submissions (none lost, none graded twice);
- page latency (p50, p95) for 50 concurrent users while the workers are saturated, against
  the same load on an idle stack.
Uses its own SQLite file (or $BENCH_DATABASE_URL), its own Redis port and web port.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
REDIS_PORT = 6393
WEB_PORT = 8765
BASE = f"http://127.0.0.1:{WEB_PORT}"
CORRECT = (ROOT / "bench" / "correct_attention.py").read_text()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


class Stack:
    def __init__(self, workers: int) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
        db = os.environ.get("BENCH_DATABASE_URL") or f"sqlite:///{self.tmp / 'bench.sqlite3'}"
        self.env = {
            **os.environ,
            "DEBUG": "false",
            "SECRET_KEY": "bench-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "false",
            "DATABASE_URL": db,
            "REDIS_URL": f"redis://127.0.0.1:{REDIS_PORT}/0",
            "GRADER_MAX_QUEUED_PER_USER": "100000",
            "GRADER_MAX_QUEUED_TOTAL": "100000",
            "THROTTLE_SUBMISSIONS": "100000/min",
            "THROTTLE_USER": "1000000/min",
            "LOG_LEVEL": "WARNING",
            "STATIC_ROOT": str(self.tmp / "static"),
        }
        self.workers = workers
        self.procs: list[subprocess.Popen[bytes]] = []

    def run(self, *args: str) -> str:
        return subprocess.run(
            [PY, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    def spawn(self, *cmd: str) -> None:
        log = (self.tmp / f"{len(self.procs)}.log").open("wb")
        self.procs.append(
            subprocess.Popen(
                cmd,
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )

    def start(self) -> None:
        self.run("migrate", "--noinput")
        self.run("collectstatic", "--noinput")  # production static files (hashed, compressed)
        self.spawn(
            shutil.which("redis-server") or "redis-server",
            "--port",
            str(REDIS_PORT),
            "--save",
            "",
            "--appendonly",
            "no",
        )
        self.spawn(
            PY,
            "-m",
            "celery",
            "-A",
            "quizsite",
            "worker",
            "-B",
            "--loglevel=WARNING",
            f"--concurrency={self.workers}",
            f"--schedule={self.tmp / 'beat'}",
        )
        self.spawn(
            PY,
            "-m",
            "gunicorn",
            "quizsite.wsgi",
            "-b",
            f"127.0.0.1:{WEB_PORT}",
            "-w",
            "2",
            "--threads",
            "4",
            "--log-level",
            "warning",
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{BASE}/questions/", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def tokens(self, n: int) -> list[str]:
        code = (
            "from django.contrib.auth import get_user_model\n"
            "from rest_framework.authtoken.models import Token\n"
            "U = get_user_model()\n"
            f"for i in range({n}):\n"
            "    u, _ = U.objects.get_or_create(username=f'bench{i}')\n"
            "    print(Token.objects.get_or_create(user=u)[0].key)\n"
        )
        return self.run("shell", "-v", "0", "-c", code).split()

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        shutil.rmtree(self.tmp, ignore_errors=True)


def api(method: str, path: str, token: str, body: dict | None = None) -> dict:
    req = urllib.request.Request(
        BASE + path,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


FINAL = {"passed", "failed", "error", "internal-error"}
# Run in `manage.py shell`: the burst's outcome, read from the rows (the source of truth).
BURST_STATS = """
import json
from django.db.models import Max, Min
from grader.models import Submission as S
qs = S.objects.filter(pk__in={ids!r})
final = qs.filter(status__in=S.FINAL_STATUSES)
span = final.aggregate(first=Min("received_at"), last=Max("finished_at"))
print(json.dumps({{
    "final": final.count(),
    "passed": qs.filter(status="passed").count(),
    "twice": qs.filter(attempts__gt=1).count(),
    "first": span["first"].timestamp() if span["first"] else 0,
    "wait": sorted((s.started_at - s.received_at).total_seconds() for s in final),
    "work": sorted((s.finished_at - s.started_at).total_seconds() for s in final),
    "last": span["last"].timestamp() if span["last"] else 0,
}}))
"""


def submit_and_wait(token: str, poll: float = 0.005) -> tuple[float, dict]:
    t0 = time.perf_counter()
    sub = api(
        "POST",
        "/api/submissions/",
        token,
        {"exercise": "scaled-dot-product-attention", "code": CORRECT},
    )
    while sub["status"] not in FINAL:
        time.sleep(poll)
        sub = api("GET", sub["url"], token)
    return time.perf_counter() - t0, sub


GRADE_ALONE = """
import time
from grader.engine.grading import grade
from grader.models import Exercise
from grader.engine.sandbox import SandboxExecutor
from grader.selectors.exercises import exercise_spec_get
exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
spec = exercise_spec_get(exercise=exercise)
executor = SandboxExecutor()
code = open("bench/correct_attention.py").read()
for seed in range(5):
    grade(spec=spec, code=code, seed=seed, executor=executor)
for seed in range({n}):
    t = time.perf_counter()
    grade(spec=spec, code=code, seed=seed, executor=executor)
    print(time.perf_counter() - t)
executor.close()
"""


def sandbox_grade_baseline(stack: Stack, n: int) -> list[float]:
    """The grade alone, in a warm sandbox of its own: the floor of any pipeline."""
    return [float(x) for x in stack.run("shell", "-v", "0", "-c", GRADE_ALONE.format(n=n)).split()]


def page_load(seconds: float, users: int, path: str) -> list[float]:
    """`users` concurrent clients fetching a page for `seconds`; returns each latency."""
    latencies: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def user() -> None:
        mine = []
        while time.monotonic() < stop:
            t = time.perf_counter()
            urllib.request.urlopen(BASE + path, timeout=30).read()
            mine.append(time.perf_counter() - t)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=user) for _ in range(users)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=40, help="sequential submissions at idle")
    parser.add_argument("--burst", type=int, default=500, help="submissions in the burst")
    parser.add_argument("--users", type=int, default=50, help="concurrent page users")
    parser.add_argument("--seconds", type=float, default=10.0, help="page load duration")
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes")
    args = parser.parse_args()

    stack = Stack(args.workers)
    try:
        stack.start()
        tokens = stack.tokens(20)
        print(
            f"stack up: gunicorn 2x4, celery --concurrency={args.workers}, redis, "
            f"{stack.env['DATABASE_URL'].split(':')[0]}"
        )

        base = sandbox_grade_baseline(stack, args.idle)
        for _ in range(5):
            submit_and_wait(tokens[0])
        idle = [submit_and_wait(tokens[0])[0] for _ in range(args.idle)]
        print(f"\n1. submit -> verdict at idle, {args.idle} sequential submissions")
        print(
            f"   sandbox grade alone (baseline): p50 {pct(base, 50) * 1e3:7.1f} ms  "
            f"p95 {pct(base, 95) * 1e3:7.1f} ms"
        )
        print(
            f"   HTTP submit -> stored verdict : p50 {pct(idle, 50) * 1e3:7.1f} ms  "
            f"p95 {pct(idle, 95) * 1e3:7.1f} ms  "
            f"({pct(idle, 50) / pct(base, 50):.1f}x the grade alone)"
        )

        idle_pages = page_load(
            args.seconds / 2, args.users, "/questions/why-divide-before-softmax/"
        )

        ids: list[int] = []
        lock = threading.Lock()
        t0 = time.perf_counter()

        def one(i: int) -> None:
            sub = api(
                "POST",
                "/api/submissions/",
                tokens[i % len(tokens)],
                {"exercise": "scaled-dot-product-attention", "code": CORRECT},
            )
            with lock:
                ids.append(sub["id"])

        with ThreadPoolExecutor(16) as pool:
            list(pool.map(one, range(args.burst)))
        accepted = time.perf_counter() - t0
        busy_pages = page_load(args.seconds, args.users, "/questions/why-divide-before-softmax/")
        check = BURST_STATS.format(ids=ids)
        deadline = time.monotonic() + 600
        while True:
            stats = json.loads(stack.run("shell", "-v", "0", "-c", check))
            if stats["final"] == len(ids) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        span = stats["last"] - stats["first"]
        print(f"\n2. burst of {args.burst} submissions (accepted in {accepted:.1f} s)")
        print(
            f"   final {stats['final']}/{len(ids)}, passed {stats['passed']}, "
            f"graded more than once {stats['twice']}, lost {len(ids) - stats['final']}"
        )
        print(
            f"   sustained {stats['final'] / span:.1f} verdicts/s over {span:.1f} s "
            f"(baseline: one sandbox alone grades {1 / pct(base, 50):.0f}/s)"
        )
        print(
            "   per submission, from the rows: queue wait p50 "
            f"{pct(stats['wait'], 50) * 1e3:.1f} ms,"
            f" claim-to-verdict p50 {pct(stats['work'], 50) * 1e3:.1f} ms"
        )
        print(f"\n3. question page, {args.users} concurrent users")
        print(
            f"   idle stack (baseline)     : p50 {pct(idle_pages, 50) * 1e3:7.1f} ms  "
            f"p95 {pct(idle_pages, 95) * 1e3:7.1f} ms  ({len(idle_pages)} requests)"
        )
        print(
            f"   workers saturated by burst: p50 {pct(busy_pages, 50) * 1e3:7.1f} ms  "
            f"p95 {pct(busy_pages, 95) * 1e3:7.1f} ms  ({len(busy_pages)} requests, "
            f"p95 {pct(busy_pages, 95) / pct(idle_pages, 95):.2f}x idle)"
        )
        print(f"\n   median of {statistics.median(idle) * 1e3:.1f} ms per idle verdict")
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
