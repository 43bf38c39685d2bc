"""A grade task's publish: the connection kept per thread against a new one per message.

    make bench-publish          (or: .venv/bin/python -m bench.publish [--messages 300])

Starts a Redis of its own (port 6404), then times ``grader.publish.task_publish`` (the kept
connection) and the same send on a fresh bounded connection per message (what it did before),
alternating, in one run: wall time and this process's CPU per message. Prints the load average
at the start and the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

from bench.common import load

PORT = 6404
os.environ["REDIS_URL"] = f"redis://127.0.0.1:{PORT}/0"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=300)
    args = parser.parse_args()
    server = subprocess.Popen(
        [shutil.which("redis-server") or "redis-server", "--port", str(PORT), "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    try:
        import django

        django.setup()
        from celery import current_app

        import quizsite.celery  # noqa: F401  (the app and its settings)
        from grader.publish import GRADE_SUBMISSION, _connection, task_publish

        time.sleep(0.5)

        def fresh() -> None:  # the design before: a bounded connection made for each message
            with _connection() as connection:
                current_app.send_task(
                    GRADE_SUBMISSION, args=(1,), connection=connection, retry=False
                )

        def kept() -> None:
            assert task_publish(name=GRADE_SUBMISSION, args=(1,))

        print(f"load average at the start: {load()} (2 cores)")
        times: dict[str, list[float]] = {"fresh": [], "kept": []}
        cpu = {"fresh": 0.0, "kept": 0.0}
        for _ in range(5):
            fresh(), kept()
        for _ in range(args.messages):
            for name, send in (("fresh", fresh), ("kept", kept)):
                t, c = time.perf_counter(), time.process_time()
                send()
                times[name].append((time.perf_counter() - t) * 1e3)
                cpu[name] += (time.process_time() - c) * 1e3
        print(f"load average at the end: {load()}")
        for name, label in (
            ("fresh", "baseline: a new connection per message"),
            ("kept", "kept per thread"),
        ):
            print(
                f"{label:<40} wall median {statistics.median(times[name]):6.2f} ms   "
                f"CPU {cpu[name] / args.messages:5.2f} ms per message"
            )
        ratio = statistics.median(times["fresh"]) / statistics.median(times["kept"])
        print(f"kept is {ratio:.1f}x faster (wall, median)")
    finally:
        server.terminate()
        server.wait(5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
