"""What Celery itself costs a task: worker CPU per no-op task, prefork pool against solo workers.

    make bench-celery-dispatch  (or: .venv/bin/python -m bench.celery_dispatch [--tasks 3000])

Not part of `make bench`: it explains bench/pipeline.py's "celery main" and part of its pool
CPU. Starts a Redis of its own (port 6405), publishes ``--tasks`` no-op tasks with the project's
Celery settings (its broker transport, acks late, a prefetch of one, JSON, results ignored), and
reads the CPU that the workers' processes used until the queue is empty. The workers load the
Django settings as the project's do, so Celery's Django fixup runs around each task:
- prefork: one ``celery worker --concurrency=2``, as the project runs it (main process and two
  pool processes, the message handed from one to the other);
- solo: two ``celery worker --pool=solo``, each taking and running its own messages.
The baseline is the prefork run. Prints the load average at the start and the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import Any

from celery import Celery

from bench.common import ROOT, load, processes
from grader.engine.sandbox.launcher import process_children, process_tree

PORT = 6405
QUEUE = "celery"
# Django's settings, as a worker of the project has them: Celery's Django fixup then runs around
# each task as it does there (importing the broker transport would set quizsite.settings, which
# wants a SECRET_KEY from the environment). The broker is this benchmark's own Redis.
os.environ["REDIS_URL"] = f"redis://127.0.0.1:{PORT}/0"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
# The project's Celery settings (transport, acks late, a prefetch of one, JSON, results
# ignored), read as quizsite/celery.py reads them.
app = Celery("bench_dispatch")
app.config_from_object("django.conf:settings", namespace="CELERY")


@app.task(name="bench.noop")
def noop(i: int) -> None:
    return None


def _workers_cpu(pids: list[int]) -> float:
    """CPU seconds so far of these processes and everything below them."""
    table, children = processes(), process_children()
    tree = {q for pid in pids for q in process_tree(pid, children)}
    return sum(table[q][2] for q in tree if q in table)


def _run(mode: str, tasks: int) -> float:
    """Worker CPU seconds per task in ``mode``, on a Redis of its own: the queue's bindings,
    which a publisher reads once, stay as the workers declared them."""
    import redis

    server = subprocess.Popen(
        [shutil.which("redis-server") or "redis-server", "--port", str(PORT), "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    time.sleep(0.5)
    client = redis.Redis(port=PORT)
    base = [sys.executable, "-m", "celery", "-A", "bench.celery_dispatch", "worker"]
    base += ["--loglevel=WARNING", "--without-gossip", "--without-mingle"]
    if mode == "prefork":
        commands = [[*base, "--concurrency=2", "-n", "prefork@%h"]]
    else:
        commands = [[*base, "--pool=solo", "-n", f"solo{i}@%h"] for i in range(2)]
    workers = [
        subprocess.Popen(
            cmd,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for cmd in commands
    ]
    try:
        noop.delay(-1)  # the workers are up once this one is taken
        _drained(client, seconds=60)
        time.sleep(1.0)
        pids = [w.pid for w in workers]
        before = _workers_cpu(pids)
        for i in range(tasks):
            noop.delay(i)
        _drained(client, seconds=120)
        time.sleep(0.5)  # the last messages run and are acknowledged
        return (_workers_cpu(pids) - before) / tasks
    finally:
        for w in workers:
            os.killpg(w.pid, signal.SIGTERM)
        for w in workers:
            w.wait(20)
        server.terminate()
        server.wait(10)


def _drained(client: Any, *, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while client.llen(QUEUE):
        if time.monotonic() > deadline:
            raise SystemExit(f"the workers took nothing from the queue for {seconds:.0f} s")
        time.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3000)
    args = parser.parse_args()
    print(f"load average at the start: {load()} (2 cores)")
    prefork = _run("prefork", args.tasks)
    solo = _run("solo", args.tasks)
    print(f"load average at the end: {load()}")
    print()
    print(
        f"baseline: prefork, one worker --concurrency=2   worker CPU per task "
        f"{prefork * 1e3:6.3f} ms"
    )
    print(
        f"solo, two workers                              worker CPU per task "
        f"{solo * 1e3:6.3f} ms   {solo / prefork:4.2f}x the baseline"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
