"""The worker's cost around a grade: claim-to-verdict against the grade alone, in one run.

    make bench-worker           (or: .venv/bin/python -m bench.worker [--grades 40])

In this process, on a SQLite file of its own (or $BENCH_DATABASE_URL), with one warm sandbox:
- the grade alone: ``grading.grade`` of the submission's code (plan, sandbox, judging);
- claim-to-verdict: ``submission_grade`` (claim, the grade with its pictures, the verdict
  written), timed around the call and read back from the rows (started_at -> finished_at).
  Rows are created as the web creates them (no seed yet): the claim draws the seed the worker
  prepared the inputs for once the last verdict was stored, as it does between messages;
- the database statements per verdict, and how many of them write;
- the Python function calls of one submission_grade call (cProfile, the median of five):
  exact, whatever the machine does, where its times move by tens of percent.
For a correct and a wrong (diagnosed) submission. No Celery here: bench/pipeline.py times
the whole pipeline. Prints the load average at the start and the end.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.common import CORRECT, ROOT, load

TMP = Path(tempfile.mkdtemp(prefix="bench-worker-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.settings")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz")
os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1")
os.environ["DATABASE_URL"] = (
    os.environ.get("BENCH_DATABASE_URL") or f"sqlite:///{TMP / 'db.sqlite3'}"
)
# Nothing listens here: a publish (there is none on this path) would fail at once.
os.environ["REDIS_URL"] = "redis://127.0.0.1:9/0"
os.environ.setdefault("LOG_LEVEL", "WARNING")

CODES = {
    "correct": CORRECT,
    "wrong": (ROOT / "tests/golden/scaled-dot-product-attention/missing_scale.py").read_text(),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grades", type=int, default=40)
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings

    # No Redis here (see REDIS_URL): the question cache, which saving an exercise touches,
    # stays in this process instead of logging a refused connection.
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from grader.engine.grading import grade
    from grader.engine.sandbox import SandboxExecutor
    from grader.models import Exercise, Submission
    from grader.selectors.exercises import exercise_spec_get
    from grader.services.grading import submission_grade

    call_command("migrate", verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bench-worker")
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    spec = exercise_spec_get(exercise=exercise)
    executor = SandboxExecutor()
    executor.self_check()
    print(f"load average at the start: {load()} (2 cores)")
    rows = []
    try:
        for name, code in CODES.items():

            def new(code: str = code) -> Submission:
                now = timezone.now()
                return Submission.objects.create(
                    user=user,
                    exercise=exercise,
                    code=code,
                    seed=Submission.SEED_UNDRAWN,
                    received_at=now,
                    queued_at=now,
                )

            alone, around, ids = [], [], []
            for _ in range(args.grades + 5):
                s = new()
                time.sleep(0.02)  # a worker between messages
                t = time.perf_counter()
                grade(spec=spec, code=s.code, seed=time.time_ns() % 2**31, executor=executor)
                alone.append(time.perf_counter() - t)
                time.sleep(0.02)
                t = time.perf_counter()
                submission_grade(submission_id=s.pk, worker="bench:1:a", executor=executor)
                around.append(time.perf_counter() - t)
                ids.append(s.pk)
            alone, around, ids = alone[5:], around[5:], ids[5:]  # warm-up
            stored = [
                (r.finished_at - r.started_at).total_seconds()
                for r in Submission.objects.filter(pk__in=ids)
            ]
            counted = []
            for _ in range(5):
                s = new()
                profile = cProfile.Profile()
                profile.enable()
                submission_grade(submission_id=s.pk, worker="bench:1:a", executor=executor)
                profile.disable()
                counted.append(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]
            last = new()
            with CaptureQueriesContext(connection) as queries:
                submission_grade(submission_id=last.pk, worker="bench:1:a", executor=executor)
            writes = sum(q["sql"].split()[0].upper() in {"UPDATE", "INSERT"} for q in queries)
            if os.environ.get("BENCH_SHOW_SQL"):
                print(*(q["sql"][:300] for q in queries), sep="\n")
            calls = statistics.median(counted)
            rows.append((name, alone, around, stored, len(queries), writes, calls))
    finally:
        executor.close()
    print(f"load average at the end: {load()}")
    print()
    for name, alone, around, stored, n_queries, writes, calls in rows:
        a, w, st = (statistics.median(x) * 1e3 for x in (alone, around, stored))
        print(f"{name}: grade alone (grading.grade, planned in it)   median {a:6.2f} ms")
        print(
            f"{name}: claim-to-verdict (the row's started_at to finished_at)   median {st:6.2f} ms"
            f"   {st / a:4.2f}x the grade alone"
        )
        print(
            f"{name}: the whole submission_grade call, with the next submission's inputs "
            f"prepared after the verdict   median {w:6.2f} ms"
        )
        print(f"{name}: database statements per verdict: {n_queries} ({writes} writes)")
        print(f"{name}: Python calls of the whole submission_grade call: {calls:.0f}")
    met = all(statistics.median(r[3]) <= 1.5 * statistics.median(r[1]) for r in rows)
    print(f"\ngoal: claim-to-verdict <= 1.5x the grade alone: {'MET' if met else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
