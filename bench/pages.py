"""The question page while the graders are saturated, against the same page at idle, in one run.

    make bench-pages        (or: .venv/bin/python -m bench.pages [--rate 50] [--seconds 20])

Prints the load average at start and end, then for the anonymous question page:
- open loop: requests fired on a fixed schedule (--rate per second), each latency measured
  from its scheduled send time, so a stalled server cannot hide behind a stalled client
  (coordinated omission);
- closed loop: --users concurrent clients, each sending its next request when the last ends;
each on an idle stack (the baseline) and with both Celery processes saturated by a burst of
submissions queued beforehand (checked: work must be left at the end of every saturated phase).
By default the two alternate in windows of --window seconds, grading switched off (Celery's
cancel_consumer: an idle stack) then on again through the backlog, so the drifting load of a
shared machine weighs on both alike; --mode sequential: idle, then saturated, once each.
Its own ports (web 8803, Redis 6403) and its own SQLite file.
"""

from __future__ import annotations

import argparse
import http.client
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field

from bench.common import pct
from bench.pipeline import CORRECT, Stack, api

WEB_PORT = 8803
REDIS_PORT = 6403
PATH = "/questions/why-divide-before-softmax/"
BASE = f"http://127.0.0.1:{WEB_PORT}"
TIMEOUT = 30.0


@dataclass
class Run:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, latency: float, ok: bool) -> None:
        with self.lock:
            self.latencies.append(latency)
            self.errors += not ok

    def line(self) -> str:
        lat = self.latencies or [float("nan")]
        return (
            f"p50 {pct(lat, 50) * 1e3:7.1f} ms  p95 {pct(lat, 95) * 1e3:7.1f} ms  "
            f"p99 {pct(lat, 99) * 1e3:7.1f} ms  ({len(self.latencies)} requests, "
            f"{self.errors} errors)"
        )


def fetch() -> bool:
    """One page fetch on a fresh connection (as a new visitor's browser would open)."""
    conn = http.client.HTTPConnection("127.0.0.1", WEB_PORT, timeout=TIMEOUT)
    try:
        conn.request("GET", PATH)
        resp = conn.getresponse()
        resp.read()
        return resp.status == 200
    except OSError:
        return False
    finally:
        conn.close()


Classify = Callable[[float], "Run | None"]


def open_loop(seconds: float, rate: float, into: Classify) -> None:
    """Request i is due at start + i/rate whatever happened to the others; its latency runs
    from that due time, so time spent waiting for a free client thread counts too."""
    n = int(seconds * rate)

    def one(due: float) -> None:
        ok = fetch()
        run = into(due)
        if run is not None:
            run.add(time.perf_counter() - due, ok)

    # Far more threads than the rate needs at normal latencies: the client is not the limit.
    with ThreadPoolExecutor(max_workers=256) as pool:
        start = time.perf_counter() + 0.05
        for i in range(n):
            due = start + i / rate
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            pool.submit(one, due)


def closed_loop(seconds: float, users: int, into: Classify) -> None:
    stop = time.monotonic() + seconds

    def user() -> None:
        while time.monotonic() < stop:
            t = time.perf_counter()
            ok = fetch()
            run = into(t)
            if run is not None:
                run.add(time.perf_counter() - t, ok)

    threads = [threading.Thread(target=user) for _ in range(users)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


class Workers:
    """Grading switched off and on through Celery's remote control: the workers stop taking
    grading tasks (they finish the one or two in hand) and take them again. Not SIGSTOP: a
    worker stopped inside a write would hold SQLite's lock and block every other writer."""

    def __init__(self, redis_port: int) -> None:
        from celery import Celery

        self.app = Celery(broker=f"redis://127.0.0.1:{redis_port}/0")

    def _control(self, command: str) -> None:
        replies = getattr(self.app.control, command)("celery", reply=True, timeout=5.0, limit=1)
        if not replies:
            raise RuntimeError(f"no worker answered {command}")

    def pause(self) -> None:
        self._control("cancel_consumer")

    def resume(self) -> None:
        self._control("add_consumer")


class Interleaved:
    """Alternate windows: grading off (idle), then on through the backlog (saturated), so a
    shared machine's drifting load weighs on both sides alike. Requests sent within GUARD
    after a switch count for neither."""

    GUARD = 0.5  # a worker switched off finishes the task in hand (and a reserved one)

    def __init__(self, workers: Workers, stack: Stack, window: float) -> None:
        self.workers, self.stack, self.window = workers, stack, window
        self.idle, self.busy = Run(), Run()
        self.switches: list[tuple[float, bool]] = []
        self.left: list[int] = []  # submissions still to grade at the end of each busy window
        self.graded, self.busy_seconds = 0, 0.0

    def classify(self, t: float) -> Run | None:
        state = None
        for at, busy in self.switches:
            if at <= t:
                state = (at, busy)
        if state is None or t - state[0] < self.GUARD:
            return None
        return self.busy if state[1] else self.idle

    def drive(self, seconds: float, load: Callable[[float, Classify], None]) -> None:
        windows = max(2, round(seconds / self.window) // 2 * 2)
        done = threading.Event()

        def switch() -> None:
            for k in range(windows):
                busy = k % 2 == 1
                before = queued(self.stack) if busy else 0
                (self.workers.resume if busy else self.workers.pause)()
                self.switches.append((time.perf_counter(), busy))
                if done.wait(self.window):
                    break
                if busy:
                    self.left.append(queued(self.stack))
                    self.graded += before - self.left[-1]
                    self.busy_seconds += self.window
            self.workers.pause()

        switcher = threading.Thread(target=switch)
        switcher.start()
        while not self.switches:
            time.sleep(0.001)
        load(windows * self.window, self.classify)
        done.set()
        switcher.join()


def queued(stack: Stack) -> int:
    """Submissions not graded yet (queued or running), read from the rows: the broker alone
    does not hold them all (a fair-share re-publish waits in a worker as a countdown task)."""
    db = stack.env["DATABASE_URL"].removeprefix("sqlite:///")
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)) as conn:
        (n,) = conn.execute(
            "SELECT count(*) FROM grader_submission WHERE status IN ('queued', 'running')"
        ).fetchone()
    return int(n)


def submit(tokens: list[str], n: int) -> None:
    def one(i: int) -> None:
        api(
            "POST",
            "/api/submissions/",
            tokens[i % len(tokens)],
            {"exercise": "scaled-dot-product-attention", "code": CORRECT},
        )

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(one, range(n)))


# The drain rate assumed at least, whatever a first burst measures: a burst sized too small
# leaves the workers idle halfway through a phase (the run then says NOT SATURATED).
MIN_DRAIN_PER_SECOND = 60.0


def saturate(
    stack: Stack, workers: Workers, tokens: list[str], seconds: float
) -> tuple[int, float]:
    """Queue enough grading work to keep every worker busy for `seconds`: the drain rate is
    measured on a first burst, then the rest is posted with the workers stopped (on a loaded
    machine they may drain as fast as we post). Returns (backlog, rate); workers stopped."""
    submit(tokens, 300)
    first = queued(stack)
    time.sleep(3.0)
    rate = (first - queued(stack)) / 3.0
    workers.pause()
    submit(tokens, max(0, int(max(rate, MIN_DRAIN_PER_SECOND) * seconds * 1.3) - queued(stack)))
    return queued(stack), rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=50.0, help="open-loop requests/s")
    parser.add_argument("--users", type=int, default=50, help="closed-loop concurrent users")
    parser.add_argument(
        "--mode",
        choices=("interleaved", "sequential"),
        default="interleaved",
        help="alternate idle/saturated windows (default), or idle then saturated, once each",
    )
    parser.add_argument(
        "--seconds", type=float, default=20.0, help="each load's duration (per phase if sequential)"
    )
    parser.add_argument("--window", type=float, default=2.5, help="interleaved window, s")
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes")
    parser.add_argument("--web-workers", type=int, default=2, help="gunicorn processes")
    parser.add_argument("--web-threads", type=int, default=1, help="gunicorn threads each")
    args = parser.parse_args()

    os.environ.pop("BENCH_DATABASE_URL", None)  # always its own SQLite file
    load_start = os.getloadavg()
    stack = Stack(
        args.workers,
        web_port=WEB_PORT,
        redis_port=REDIS_PORT,
        web=(args.web_workers, args.web_threads),
    )
    try:
        stack.start()
        import bench.pipeline as pipeline

        pipeline.BASE = BASE  # api() posts to this stack, not the pipeline benchmark's
        tokens = stack.tokens(50)
        print(
            f"load average at start: {' '.join(f'{x:.2f}' for x in load_start)}\n"
            f"stack up: gunicorn {args.web_workers}x{args.web_threads}, "
            f"celery --concurrency={args.workers}, redis, sqlite; page {PATH} (anonymous)"
        )
        for _ in range(100):  # warm: imports, template loading, caches
            fetch()

        workers = Workers(stack.redis_port)
        if args.mode == "sequential":
            idle_open, idle_closed, busy_open, busy_closed = Run(), Run(), Run(), Run()
            open_loop(args.seconds, args.rate, lambda _: idle_open)
            closed_loop(args.seconds, args.users, lambda _: idle_closed)
            backlog, drain = saturate(stack, workers, tokens, 2 * args.seconds + 4)
            print(f"workers saturated: {backlog} submissions to grade (drain ~{drain:.0f}/s)")
            workers.resume()
            time.sleep(1.0)
            open_loop(args.seconds, args.rate, lambda _: busy_open)
            left = [queued(stack)]
            closed_loop(args.seconds, args.users, lambda _: busy_closed)
            left.append(queued(stack))
        else:
            backlog, drain = saturate(stack, workers, tokens, args.seconds + 4)
            print(
                f"backlog: {backlog} submissions to grade (drain ~{drain:.0f}/s); windows of "
                f"{args.window:.1f} s, grading off (idle) then on (saturated)"
            )
            opened = Interleaved(workers, stack, args.window)
            opened.drive(args.seconds, lambda s, into: open_loop(s, args.rate, into))
            closed = Interleaved(workers, stack, args.window)
            closed.drive(args.seconds, lambda s, into: closed_loop(s, args.users, into))
            workers.resume()
            idle_open, busy_open = opened.idle, opened.busy
            idle_closed, busy_closed = closed.idle, closed.busy
            left = opened.left + closed.left
        saturated = min(left) > 0
        print(
            f"still to grade at the end of each saturated phase: {left}"
            f"{'' if saturated else '  (NOT SATURATED: raise the backlog)'}"
        )

        # How much the graders got while pages were served: if the machine is busy with
        # other work too, they may have had work but little CPU, and the ratio says less.
        rates = ["", ""]
        if args.mode == "interleaved":
            rates = [
                f"   grading meanwhile: {x.graded / max(x.busy_seconds, 1e-9):.0f} verdicts/s"
                for x in (opened, closed)
            ]
        print(f"\nopen loop, {args.rate:.0f} requests/s, latency from the scheduled send time")
        print(f"   idle stack (baseline)  : {idle_open.line()}")
        print(f"   workers saturated      : {busy_open.line()}{rates[0]}")
        print(f"\nclosed loop, {args.users} concurrent users")
        print(f"   idle stack (baseline)  : {idle_closed.line()}")
        print(f"   workers saturated      : {busy_closed.line()}{rates[1]}")
        print("\nsaturated / idle")
        for name, idle, busy in (
            ("open loop  ", idle_open, busy_open),
            ("closed loop", idle_closed, busy_closed),
        ):
            print(
                f"   {name}: p50 {pct(busy.latencies, 50) / pct(idle.latencies, 50):.2f}x  "
                f"p95 {pct(busy.latencies, 95) / pct(idle.latencies, 95):.2f}x"
            )
        print("   goal: open-loop p95 within 1.5x idle (closed loop: throughput-bound, reported)")
    finally:
        stack.stop()
        load_end = os.getloadavg()
        print(f"\nload average at end: {' '.join(f'{x:.2f}' for x in load_end)}")


if __name__ == "__main__":
    main()
