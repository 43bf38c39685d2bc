"""The web's cost of one submit, in this process: POST /api/submissions/ against a poll of it.

    make bench-submit           (or: .venv/bin/python -m bench.submit [--instructions])

Calls the WSGI application directly (no HTTP server, so the figures are the Django side
alone), on a SQLite file of its own and its own Redis (the rate limits and the publish are
real). Prints, for a submit and for the baseline, the same user's poll of a submission
(GET /api/submissions/<id>/: the same authentication, throttle and serializer):
- CPU per request, the lowest of seven rounds (this machine's speed moves by tens of percent
  from one second to the next: the lowest round is the least disturbed);
- Python function calls per request (cProfile): exact, whatever the machine does;
- with --instructions, the instructions per request counted by valgrind's callgrind (the
  difference between a run of 40 and one of 10 requests, so start-up cancels out):
  repeatable to about 2% and blind to the machine's speed, but about 3 minutes a side;
- with --reads, each read a submit makes, through the ORM as the code makes it against the same
  statement written out and run on the same connection (docs/decisions/0010-the-orm-on-the-
  submit.md): time (the lowest of seven rounds) and Python calls a read.
Prints the load average at the start and the end.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path

from bench.common import CORRECT, ROOT, load

REDIS_PORT = 6394
USERS = 20


def _environment(tmp: Path) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="quizsite.settings",
        DEBUG="false",
        SECRET_KEY="bench-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="false",
        DATABASE_URL=f"sqlite:///{os.environ.get('BENCH_SUBMIT_DB') or tmp / 'db.sqlite3'}",
        REDIS_URL=f"redis://127.0.0.1:{REDIS_PORT}/0",
        LOG_LEVEL="WARNING",
        STATIC_ROOT=str(tmp / "static"),
        # A load test is not abuse: the caps and throttles would refuse the later requests.
        GRADER_MAX_QUEUED_PER_USER="1000000",
        GRADER_MAX_QUEUED_TOTAL="1000000",
        THROTTLE_SUBMISSIONS="1000000/min",
        THROTTLE_USER="1000000/min",
    )


def _requests(*, migrate: bool = True) -> dict[str, Callable[[int], None]]:
    """Set up Django and the database; the two requests, each called with a counter."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application

    from accounts.services.api_tokens import api_token_issue

    if migrate:
        call_command("migrate", verbosity=0)
    users = get_user_model().objects
    tokens = [
        api_token_issue(user=users.get_or_create(username=f"bench{i}")[0]).token
        for i in range(USERS)
    ]
    app = get_wsgi_application()
    body = json.dumps({"exercise": "scaled-dot-product-attention", "code": CORRECT}).encode()

    def call(method: str, path: str, token: str, data: bytes = b"") -> bytes:
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "80",
            "HTTP_HOST": "127.0.0.1",
            "REMOTE_ADDR": "127.0.0.1",
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(data),
            "wsgi.errors": sys.stderr,
            "CONTENT_LENGTH": str(len(data)),
            "CONTENT_TYPE": "application/json",
            "HTTP_AUTHORIZATION": f"Token {token}",
        }
        status: list[str] = []
        out = b"".join(app(environ, lambda s, h, e=None: status.append(s)))
        if not status[0].startswith(("200", "201")):
            raise SystemExit(f"{method} {path}: {status[0]} {out[:300]!r}")
        return out

    first = [json.loads(call("POST", "/api/submissions/", t, body))["url"] for t in tokens]
    return {
        "submit (POST /api/submissions/)": lambda i: (
            call("POST", "/api/submissions/", tokens[i % USERS], body),
            None,
        )[1],
        "baseline: a poll (GET of a submission)": lambda i: (
            call("GET", first[i % USERS], tokens[i % USERS]),
            None,
        )[1],
    }


def _reads() -> None:
    """Each read of a submit behind a waiting queue (the requests above left one), as the code
    makes it through the ORM and as one statement written out, on the same connection."""
    from datetime import timedelta

    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone
    from knox.crypto import hash_token
    from knox.models import get_token_model

    from accounts.authentication import TokenAuthentication
    from grader.models import Exercise, Submission
    from grader.selectors.exercises import exercise_get_submittable
    from grader.services import submitting

    token_model, user_model = get_token_model(), get_user_model()
    user = user_model.objects.get(username="bench0")
    token = token_model.objects.create(user=user)[1]
    now = timezone.now()
    since = now - timedelta(seconds=settings.GRADER_FAIR_SHARE_WINDOW_SECONDS)
    slug = "scaled-dot-product-attention"
    t, u = token_model._meta.db_table, user_model._meta.db_table
    e, sub = Exercise._meta.db_table, Submission._meta.db_table
    waiting = sorted(Submission.WAITING_STATUSES)

    def sql(statement: str, params: list) -> Callable[[], object]:
        def run() -> object:
            with connection.cursor() as cursor:
                cursor.execute(statement, params)
                return cursor.fetchall()

        return run

    reads = {
        "the token with its user": (
            lambda: TokenAuthentication().authenticate_credentials(token.encode()),
            sql(
                f"SELECT * FROM {t} JOIN {u} ON {u}.id = {t}.user_id WHERE {t}.digest = %s",
                [hash_token(token)],
            ),
        ),
        "the exercise": (
            lambda: exercise_get_submittable(slug=slug),
            sql(
                f"SELECT id, is_published, starter_code, updated_at FROM {e} WHERE slug = %s",
                [slug],
            ),
        ),
        "the user's recent rows": (
            lambda: submitting._recent(Submission.objects.filter(user_id=user.pk), now=now),
            sql(
                f"SELECT id, status, started_at, finished_at FROM {sub} WHERE "
                "user_id = %s AND (finished_at >= %s OR finished_at IS NULL)",
                [user.pk, since],
            ),
        ),
        "the queue's two counts": (
            lambda: submitting._waiting_and_ahead(priority=0, now=now),
            lambda: (
                sql(f"SELECT COUNT(*) FROM {sub} WHERE status IN (%s, %s)", waiting)(),
                sql(
                    f"SELECT COUNT(*) FROM {sub} WHERE status = %s AND "
                    "(priority < %s OR (priority = %s AND queued_at < %s))",
                    ["queued", 0, 0, now],
                )(),
            ),
        ),
    }
    print("\neach read of a submit behind a waiting queue: the ORM as the code makes it, the")
    print("same statement written out (lowest of seven rounds of 200; Python calls a read)")
    for name, pair in reads.items():
        cells = []
        for read in pair:
            for _ in range(50):
                read()
            best = min(timeit.repeat(read, number=200, repeat=7)) / 200
            profile = cProfile.Profile()
            profile.runcall(lambda read=read: [read() for _ in range(100)])
            calls = pstats.Stats(profile).total_calls / 100  # type: ignore[attr-defined]
            cells.append((best, calls))
        (orm, orm_calls), (raw, raw_calls) = cells
        print(
            f"  {name:<26} ORM {orm * 1e6:6.0f} us {orm_calls:6.0f} calls   "
            f"written out {raw * 1e6:5.0f} us {raw_calls:5.0f} calls"
        )


def _counted(kind: str, n: int) -> None:
    """Run under callgrind by --instructions: ``n`` requests of ``kind`` after the set-up, on a
    copy of the parent's database (migrating under callgrind took minutes)."""
    request = _requests(migrate=False)[kind]
    for i in range(n):
        request(i)


def _instructions(kind: str, tmp: Path) -> float:
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (Debian's package valgrind)")
    from django.db import connection

    with connection.cursor() as cursor:  # everything in the database file, for the copies
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def run(n: int) -> int:
        shutil.copy(tmp / "db.sqlite3", tmp / "counted.sqlite3")
        out = subprocess.run(
            [
                *("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"),
                *(sys.executable, "-m", "bench.submit", "--counted", kind, str(n)),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "BENCH_SUBMIT_DB": str(tmp / "counted.sqlite3")},
        ).stderr
        return int(re.search(r"Collected : (\d+)", out).group(1))  # type: ignore[union-attr]

    return (run(40) - run(10)) / 30


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--per-round", type=int, default=200)
    parser.add_argument("--instructions", action="store_true", help="also count with callgrind")
    parser.add_argument("--reads", action="store_true", help="also time each read, ORM vs SQL")
    parser.add_argument("--counted", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-submit-"))
    _environment(tmp)
    if args.counted:  # the parent's Redis and a copy of its database
        try:
            _counted(args.counted[0], int(args.counted[1]))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return 0
    redis = subprocess.Popen(
        [
            *("redis-server", "--port", str(REDIS_PORT), "--bind", "127.0.0.1"),
            *("--save", "", "--appendonly", "no"),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.3)
        print(f"load average at the start: {load()} (2 cores)")
        rows = []
        for kind, request in _requests().items():
            for i in range(50):  # warm: the first requests fill Django's caches
                request(i)
            rounds = []
            for _ in range(args.rounds):
                t = time.process_time()
                for i in range(args.per_round):
                    request(i)
                rounds.append((time.process_time() - t) / args.per_round)
            profile = cProfile.Profile()
            profile.enable()
            for i in range(args.per_round):
                request(i)
            profile.disable()
            calls = pstats.Stats(profile).total_calls / args.per_round  # type: ignore[attr-defined]
            rows.append(
                (kind, min(rounds), calls, _instructions(kind, tmp) if args.instructions else None)
            )
        print(f"load average at the end: {load()}\n")
        base = rows[1]
        for kind, cpu, calls, instructions in rows:
            line = f"{kind:<40} CPU {cpu * 1e3:6.2f} ms   {calls:8.0f} calls"
            if instructions is not None:
                line += f"   {instructions / 1e6:6.2f} M instructions"
            print(line)
        kind, cpu, calls, instructions = rows[0]
        ratios = f"CPU {cpu / base[1]:.2f}x, calls {calls / base[2]:.2f}x"
        if instructions is not None and base[3]:
            ratios += f", instructions {instructions / base[3]:.2f}x"
        print(f"a submit costs the baseline's {ratios}")
        if args.reads:
            _reads()
    finally:
        redis.terminate()
        redis.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
