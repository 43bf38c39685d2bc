"""End-to-end pipeline benchmark: starts the whole stack and measures it in one run.

    make bench-pipeline         (or: .venv/bin/python -m bench.pipeline [--burst 1000])

Prints, each beside a baseline measured in the same run, and the load average at the start
and the end:
- HTTP submit -> stored verdict at idle (p50, p95): from the moment the client sends the POST
  to the row's finished_at (same clock; the client polls every 20 ms only to know it is done,
  so its polling neither delays nor loads the grade), against the grade alone;
- a burst of submissions through HTTP, Redis, Celery and the database: sustained verdicts per
  second (none lost, none graded twice), and claim-to-verdict from the rows against the grade
  alone; on PostgreSQL ($BENCH_DATABASE_URL) also the transactions and rows written per
  verdict. The burst runs alone (bench/pages.py measures pages while grading);
- at idle and in the burst, the share of the time some task of the machine waited for a CPU
  (/proc/pressure/cpu): how contended the CPU was, what decides whether a sandbox child warms up.
Uses its own SQLite file (or $BENCH_DATABASE_URL), its own Redis port and web port.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.common import CORRECT, ROOT, load, pct, processes
from grader.engine.sandbox.executor import CpuPressure
from grader.engine.sandbox.launcher import process_children, process_tree

PY = sys.executable
REDIS_PORT = 6393
WEB_PORT = 8765
BASE = f"http://127.0.0.1:{WEB_PORT}"


class Stack:
    """The whole site on its own ports, files and database (DEBUG off, production static files).

    ``lifted_limits`` lifts the queue caps and submission throttles (a load test is not abuse);
    ``overrides`` go to the environment last. ``root``: the tree to run (another commit's
    ``git worktree``, for bench/against.py), with its own ``.venv`` if it has one.
    """

    def __init__(
        self,
        workers: int,
        *,
        web_port: int = WEB_PORT,
        redis_port: int = REDIS_PORT,
        web: tuple[int, int] = (2, 1),  # gunicorn processes, threads each (gunicorn.conf.py)
        lifted_limits: bool = True,
        root: Path = ROOT,
        **overrides: str,
    ) -> None:
        self.web_port, self.redis_port, self.web = web_port, redis_port, web
        self.root = root
        venv = root / ".venv" / "bin" / "python"
        self.python = str(venv) if venv.exists() else PY
        self.tmp = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
        db = os.environ.get("BENCH_DATABASE_URL") or f"sqlite:///{self.tmp / 'bench.sqlite3'}"
        self.env = {
            **os.environ,
            "DEBUG": "false",
            "SECRET_KEY": "bench-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "false",
            "DATABASE_URL": db,
            "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
            "LOG_LEVEL": "WARNING",
            "STATIC_ROOT": str(self.tmp / "static"),
        }
        if lifted_limits:
            self.env.update(
                GRADER_MAX_QUEUED_PER_USER="100000",
                GRADER_MAX_QUEUED_TOTAL="100000",
                THROTTLE_SUBMISSIONS="100000/min",
                THROTTLE_USER="1000000/min",
            )
        self.env.update(overrides)
        self.workers = workers
        self.procs: list[subprocess.Popen[bytes]] = []

    @property
    def base(self) -> str:
        """Where its web listens: the address api() and submit_and_wait() take as ``base``."""
        return f"http://127.0.0.1:{self.web_port}"

    def run(self, *args: str) -> str:
        return subprocess.run(
            [self.python, "manage.py", *args],
            cwd=self.root,
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
                cwd=self.root,
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
            str(self.redis_port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        )
        self.spawn(
            self.python,
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
            self.python,
            "-m",
            "gunicorn",
            "quizsite.wsgi",
            "-b",
            f"127.0.0.1:{self.web_port}",
            "-w",
            str(self.web[0]),
            "--threads",
            str(self.web[1]),
            "--log-level",
            "warning",
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(
                    f"http://127.0.0.1:{self.web_port}/questions/", timeout=2
                ).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def tokens(self, users: int | list[str]) -> list[str]:
        """API tokens of ``users`` accounts (bench0, bench1, ...), or of the names given.
        Issued through knox itself, which every tree benchmarked against has."""
        names = users if isinstance(users, list) else [f"bench{i}" for i in range(users)]
        code = (
            "from django.contrib.auth import get_user_model\n"
            "from knox.models import AuthToken\n"
            "U = get_user_model()\n"
            f"for name in {names!r}:\n"
            "    u, _ = U.objects.get_or_create(username=name)\n"
            "    print(AuthToken.objects.create(user=u)[1])\n"
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


def api(
    method: str, path: str, token: str, body: dict | None = None, *, base: str | None = None
) -> dict:
    req = urllib.request.Request(
        (base or BASE) + path,
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


def submit_and_wait(
    token: str, poll: float = 0.02, *, base: str | None = None
) -> tuple[float, dict]:
    """(wall-clock time the POST was sent, the final submission)."""
    t0 = time.time()
    sub = api(
        "POST",
        "/api/submissions/",
        token,
        {"exercise": "scaled-dot-product-attention", "code": CORRECT},
        base=base,
    )
    while sub["status"] not in FINAL:
        time.sleep(poll)
        sub = api("GET", sub["url"], token, base=base)
    return t0, sub


@contextlib.contextmanager
def final_counter(database_url: str, ids: list[int]) -> Iterator[Callable[[], int]]:
    """A cheap count of the rows of ``ids`` with a final status, on the bench's database."""
    marks = ", ".join(["%s"] * len(FINAL))
    sql = (
        f"SELECT COUNT(*) FROM grader_submission WHERE id BETWEEN %s AND %s AND status IN ({marks})"
    )
    params = [min(ids), max(ids), *sorted(FINAL)]
    if database_url.startswith("sqlite"):
        import sqlite3

        conn: Any = sqlite3.connect(database_url.split("sqlite:///", 1)[1], timeout=20)
        sql = sql.replace("%s", "?")
    else:
        import psycopg

        conn = psycopg.connect(database_url, autocommit=True)
    try:
        yield lambda: int(conn.execute(sql, params).fetchone()[0])
    finally:
        conn.close()


def burst_run(
    stack: Stack, tokens: list[str], *, n: int, clients: int, base: str | None = None
) -> tuple[list[int], float]:
    """Submit ``n`` at once from ``clients`` threads, the accounts in turn, and wait until each
    has its verdict: (the ids, the seconds until the last was accepted)."""
    ids: list[int] = []
    lock = threading.Lock()
    t0 = time.perf_counter()

    def one(i: int) -> None:
        sub = api(
            "POST",
            "/api/submissions/",
            tokens[i % len(tokens)],
            {"exercise": "scaled-dot-product-attention", "code": CORRECT},
            base=base,
        )
        with lock:
            ids.append(sub["id"])

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, range(n)))
    accepted = time.perf_counter() - t0
    deadline = time.monotonic() + 600
    # Polled with one SQL count on a connection of our own: a `manage.py shell` per poll
    # (Django's start-up, twice a second) took a third of a core from the graders.
    with final_counter(stack.env["DATABASE_URL"], ids) as finished:
        while finished() < len(ids) and time.monotonic() < deadline:
            time.sleep(0.5)
    return ids, accepted


# Run in `manage.py shell`: when each row's verdict was stored (epoch seconds).
STORED_AT = """
import json
from grader.models import Submission as S
rows = S.objects.filter(pk__in={ids!r}).values_list("pk", "finished_at")
print(json.dumps({{pk: f.timestamp() for pk, f in rows}}))
"""


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
    time.sleep(0.02)  # as a worker between messages
    t = time.perf_counter()
    grade(spec=spec, code=code, seed=seed, executor=executor)
    print(time.perf_counter() - t)
executor.close()
"""


def sandbox_grade_baseline(stack: Stack, n: int) -> list[float]:
    """The grade alone, in a warm sandbox of its own: the floor of any pipeline."""
    return [float(x) for x in stack.run("shell", "-v", "0", "-c", GRADE_ALONE.format(n=n)).split()]


# Run in `manage.py shell` on PostgreSQL: what the database has committed and written so far.
PG_WRITES = """
from django.db import connection
with connection.cursor() as c:
    c.execute("SELECT pg_stat_force_next_flush()")
    c.execute(
        "SELECT xact_commit, tup_inserted + tup_updated + tup_deleted"
        " FROM pg_stat_database WHERE datname = current_database()"
    )
    print(*c.fetchone())
"""


def cpu_by_part(stack: Stack) -> dict[str, float]:
    """CPU seconds so far of each part of the stack: the web, Celery's main process, its pool
    processes, the sandboxes (zygotes and their children, reaped into the zygotes' counts),
    Redis, and PostgreSQL's server processes (all of them: run it on a quiet server)."""
    procs = processes()
    children = process_children()

    redis, celery, web = (p.pid for p in stack.procs[:3])
    pool = children.get(celery, [])
    zygotes = [q for child in pool for q in children.get(child, [])]
    sandbox = [p for q in zygotes for p in process_tree(q, children)]
    parts = {
        "web (gunicorn)": process_tree(web, children),
        "celery main": [celery] + [p for p in children.get(celery, []) if p not in pool],
        "celery pool (grading, judging, DB)": pool,
        "sandboxes (zygotes, children)": sandbox,
        "redis": [redis],
    }
    cpu = {name: sum(procs[p][2] for p in pids if p in procs) for name, pids in parts.items()}
    cpu["postgresql"] = sum(c for _, name, c in procs.values() if name.startswith("postgres"))
    return cpu


def cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def waited_share(pressure: CpuPressure) -> str:
    """The share of the time since ``pressure``'s last look that some task of this machine
    waited for a CPU (the kernel's pressure stall information), as printed."""
    share = pressure.stalled_share(time.monotonic())
    return "not known (no /proc/pressure/cpu)" if share is None else f"{share:.0%} of the time"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=40, help="sequential submissions at idle")
    parser.add_argument("--burst", type=int, default=1000, help="submissions in the burst")
    parser.add_argument("--clients", type=int, default=16, help="threads submitting the burst")
    parser.add_argument(
        "--users",
        type=int,
        default=200,
        help="accounts the burst comes from, in turn (200: five submissions each in 1,000, a "
        "deadline's burst within the per-user cap of five waiting)",
    )
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes")
    parser.add_argument("--web-workers", type=int, default=2, help="gunicorn processes")
    parser.add_argument("--web-threads", type=int, default=1, help="gunicorn threads each")
    args = parser.parse_args()

    stack = Stack(args.workers, web=(args.web_workers, args.web_threads))
    try:
        stack.start()
        tokens = stack.tokens(max(args.users, 1))
        database = stack.env["DATABASE_URL"].split(":")[0]
        print(
            f"stack up: gunicorn {stack.web[0]}x{stack.web[1]}, "
            f"celery --concurrency={args.workers}, redis, {database}"
        )
        print(f"load average at the start: {load()} (2 cores)")

        base = sandbox_grade_baseline(stack, args.idle)
        for _ in range(5):
            submit_and_wait(tokens[0])
        pressure = CpuPressure()
        waited_share(pressure)  # from now
        sent: dict[int, float] = {}  # id -> when its POST was sent
        for _ in range(args.idle):
            at, sub = submit_and_wait(tokens[0])
            sent[sub["id"]] = at
        idle_waited = waited_share(pressure)
        stored = json.loads(stack.run("shell", "-v", "0", "-c", STORED_AT.format(ids=list(sent))))
        idle = [stored[str(pk)] - at for pk, at in sent.items()]
        rows = json.loads(stack.run("shell", "-v", "0", "-c", BURST_STATS.format(ids=list(sent))))
        server = [w + k for w, k in zip(rows["wait"], rows["work"], strict=True)]
        b50 = pct(base, 50)
        print(f"\n1. submit -> verdict at idle, {args.idle} sequential submissions")
        print(
            f"   grade alone (baseline)        : p50 {b50 * 1e3:6.1f} ms  "
            f"p95 {pct(base, 95) * 1e3:6.1f} ms"
        )
        print(
            f"   HTTP submit -> stored verdict : p50 {pct(idle, 50) * 1e3:6.1f} ms  "
            f"p95 {pct(idle, 95) * 1e3:6.1f} ms  ({pct(idle, 50) / b50:.1f}x the grade alone)"
        )
        print(
            f"   received -> stored (the rows) : p50 {pct(server, 50) * 1e3:6.1f} ms  "
            f"p95 {pct(server, 95) * 1e3:6.1f} ms"
        )
        print(
            f"   claim -> verdict (the rows)   : p50 {pct(rows['work'], 50) * 1e3:6.1f} ms  "
            f"({pct(rows['work'], 50) / b50:.2f}x the grade alone)"
        )
        print(f"   tasks waiting for a CPU (PSI) : {idle_waited}")

        on_pg = database.startswith("postgres")
        before = stack.run("shell", "-v", "0", "-c", PG_WRITES).split() if on_pg else None
        cpu_before, self_before = cpu_by_part(stack), cpu_self()
        waited_share(pressure)  # from now
        ids, accepted = burst_run(stack, tokens, n=args.burst, clients=args.clients)
        cpu_after, self_after = cpu_by_part(stack), cpu_self()
        burst_waited = waited_share(pressure)
        stats = json.loads(stack.run("shell", "-v", "0", "-c", BURST_STATS.format(ids=ids)))
        after = stack.run("shell", "-v", "0", "-c", PG_WRITES).split() if on_pg else None
        span = stats["last"] - stats["first"]
        rate = stats["final"] / span
        print(
            f"\n2. burst of {args.burst} submissions from {args.clients} threads, "
            f"{len(tokens)} users in turn "
            f"(accepted in {accepted:.1f} s)"
        )
        print(
            f"   final {stats['final']}/{len(ids)}, passed {stats['passed']}, "
            f"graded more than once {stats['twice']}, lost {len(ids) - stats['final']}"
        )
        print(
            f"   sustained {rate:.1f} verdicts/s, first received to last stored in {span:.1f} s "
            f"(one sandbox alone grades {1 / b50:.0f}/s)"
        )
        work50 = pct(stats["work"], 50)
        print(
            "   per submission, from the rows: queue wait p50 "
            f"{pct(stats['wait'], 50) * 1e3:.1f} ms, claim-to-verdict p50 {work50 * 1e3:.1f} ms "
            f"({work50 / b50:.2f}x the grade alone)"
        )
        print(f"   tasks waiting for a CPU (PSI): {burst_waited}")
        print("   CPU per verdict, by part (ms):")
        used = {k: (cpu_after[k] - cpu_before[k]) * 1e3 / len(ids) for k in cpu_after}
        used["load generator (this process)"] = (self_after - self_before) * 1e3 / len(ids)
        for part, ms in used.items():
            if part != "postgresql" or on_pg:
                print(f"     {part:<36} {ms:6.2f}")
        total = sum(ms for part, ms in used.items() if part != "postgresql" or on_pg)
        print(f"     {'all':<36} {total:6.2f}   (2 cores: at most {2000 / total:.0f} verdicts/s)")
        if before and after:
            commits = (int(after[0]) - int(before[0])) / len(ids)
            written = (int(after[1]) - int(before[1])) / len(ids)
            print(f"   PostgreSQL per verdict: {commits:.1f} commits, {written:.1f} rows written")
        print(f"\nload average at the end: {load()}")
        print()
        goals = (
            ("submit -> verdict at idle p50 <= 25 ms", pct(idle, 50) <= 0.025),
            ("submit -> verdict at idle p95 <= 50 ms", pct(idle, 95) <= 0.050),
            (
                "burst >= 100 verdicts/s, none lost or graded twice",
                rate >= 100 and stats["final"] == len(ids) and stats["twice"] == 0,
            ),
        )
        for text, met in goals:
            print(f"goal: {text}: {'MET' if met else 'NOT MET'}")
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
