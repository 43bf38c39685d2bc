"""Fair share of grading, measured: the audit's scenario (burners kept queued), before and after.

    make bench-fair-share   (or: .venv/bin/python -m bench.fair_share [--samples 3] [--warmup 12])

Three new accounts keep their queues full of CPU-burning submissions (each spins until the
sandbox's CPU limit, inside the sandbox); meanwhile an honest student submits a correct
solution, waits for its verdict, and does it again. Printed: the honest student's wait from
submit to verdict, with arrival order (GRADER_ONE_RUNNING_PER_USER=false and no priorities)
and with fair share (the defaults: one running submission per user, priorities by recent
sandbox seconds), and the load average at the start and end of each. Each run starts a fresh
stack of its own: gunicorn (2 workers) on 127.0.0.1:8802, Redis on 6402, a Celery worker
(--concurrency 2) with beat, a SQLite file in a temporary folder; production settings (DEBUG
off). Not part of `make test`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request

from bench import pipeline
from bench.common import CORRECT

PY = sys.executable
WEB_PORT = 8802
REDIS_PORT = 6402
BASE = f"http://127.0.0.1:{WEB_PORT}"
EXERCISE = "scaled-dot-product-attention"
BURNER = "def attention(Q, K, V, mask=None):\n    while True:\n        pass\n"
FINAL = {"passed", "failed", "error", "internal-error"}
ARRIVAL_ORDER = {"GRADER_ONE_RUNNING_PER_USER": "false", "GRADER_FAIR_SHARE_PRIORITIES": "false"}


class Stack(pipeline.Stack):
    """bench/pipeline.py's stack on this benchmark's ports, with the production limits."""

    def __init__(self, workers: int = 2, **overrides: str) -> None:
        super().__init__(
            workers,
            web_port=WEB_PORT,
            redis_port=REDIS_PORT,
            lifted_limits=False,
            **overrides,
        )

    def start(self) -> None:
        super().start()
        # The worker is ready once it has graded one submission.
        submit_and_wait(self.tokens(["warmup"])[0])


def api(method: str, path: str, token: str, body: dict | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(
        BASE + path,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def submit_and_wait(token: str, poll: float = 0.3) -> float:
    """Submit a correct solution; seconds until its verdict. Polls under the API's user limit
    (240/min), as a browser's page does."""
    started = time.perf_counter()
    status, sub = api("POST", "/api/submissions/", token, {"exercise": EXERCISE, "code": CORRECT})
    assert status == 201, (status, sub)
    url = sub["url"]
    while sub.get("status") not in FINAL:
        time.sleep(poll)
        try:
            _, sub = api("GET", url, token)
        except OSError:  # a reset connection on a loaded machine: poll again
            sub = {}
    assert sub["status"] == "passed", sub
    return time.perf_counter() - started


def burn(token: str, stop: threading.Event, accepted: list[int]) -> None:
    """Keep this account's queue full of CPU burners, as the audit's three accounts did."""
    while not stop.is_set():
        try:
            status, _ = api(
                "POST", "/api/submissions/", token, {"exercise": EXERCISE, "code": BURNER}
            )
        except OSError:  # a reset connection on a loaded machine: the attacker tries again
            status = 0
        if status == 201:
            accepted.append(1)
        else:  # the queue cap (or the rate limit): try again shortly
            stop.wait(0.5)


def scenario(label: str, samples: int, warmup: float, **overrides: str) -> list[float]:
    stack = Stack(**overrides)
    try:
        stack.start()
        *burners, honest = stack.tokens(["burner0", "burner1", "burner2", "honest"])
        load_start = os.getloadavg()
        stop = threading.Event()
        accepted: list[int] = []
        threads = [threading.Thread(target=burn, args=(t, stop, accepted)) for t in burners]
        for t in threads:
            t.start()
        time.sleep(warmup)  # the attack is under way: queues full, the burners have history
        waits = []
        for _ in range(samples):
            waits.append(submit_and_wait(honest))
            time.sleep(1.0)
        stop.set()
        for t in threads:
            t.join()
        load_end = os.getloadavg()
        print(
            f"{label:<34}: honest wait median {statistics.median(waits):6.2f} s "
            f"(each: {', '.join(f'{w:.2f}' for w in waits)} s); "
            f"{len(accepted)} burner submissions accepted"
        )
        print(
            f"{'':<34}  load average at start {load_start[0]:.2f}, at end {load_end[0]:.2f} "
            f"(1 min; {os.cpu_count()} cores)"
        )
        return waits
    finally:
        stack.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3, help="honest submissions per run")
    parser.add_argument("--warmup", type=float, default=12.0, help="seconds of attack first")
    args = parser.parse_args()
    print(
        "3 accounts keep 5 CPU burners each queued (each spins to the sandbox's CPU limit); "
        "celery --concurrency=2\n"
    )
    before = scenario("before (arrival order)", args.samples, args.warmup, **ARRIVAL_ORDER)
    after = scenario("after (fair share, the defaults)", args.samples, args.warmup)
    print(
        f"\nhonest student's wait: {statistics.median(before):.2f} s -> "
        f"{statistics.median(after):.2f} s (median of {args.samples})"
    )


if __name__ == "__main__":
    main()
