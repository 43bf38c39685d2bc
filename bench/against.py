"""This tree against another commit's, in one run: what a user feels, before and after a change.

    git worktree add ../before <commit> && ln -s "$PWD/.venv" ../before/.venv    (once)
    .venv/bin/python -m bench.against ../before [--idle 100] [--burst 200] [--rounds 2]

Starts both trees' whole stacks side by side (bench/pipeline.py's Stack: their own ports, Redis
and SQLite files, DEBUG off), then gives them turns, so the machine's drift (its speed moves by
tens of percent within minutes, more than most changes move a figure) falls on both alike:
- at idle, one submission to each in turn (ABBA order), ``--idle`` each: HTTP submit -> stored
  verdict (p50, p95) and, from the rows, received -> claim and claim -> verdict (p50);
- bursts of ``--burst``, in turn (ABBA), ``--rounds`` each: verdicts per second and the web's
  CPU a verdict;
- with ``--page N``, what a student feels: in Debian's Chromium, logged in on the exercise's
  page, from the click on Submit until the panel shows the verdict, N each, in turn (ABBA).
Prints each figure for both trees and this tree's over the other's. A stack waiting for its turn
costs next to nothing (its worker waits on Redis). Needs what bench/pipeline.py needs: root, an
idle machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from bench.common import CORRECT, ROOT, load, pct
from bench.pipeline import BURST_STATS, STORED_AT, Stack, burst_run, cpu_by_part, submit_and_wait

# Ports of their own: bench/pipeline.py may have a stack up on its defaults.
PORTS = {"before": (8766, 6395), "after": (8767, 6396)}
PAGE_USER, PAGE_PASSWORD = "bench-page", "bench-page-password-0123"
PAGE_USER_CREATE = f"""
from django.contrib.auth import get_user_model
u, _ = get_user_model().objects.get_or_create(username={PAGE_USER!r})
u.set_password({PAGE_PASSWORD!r})
u.save()
"""
EXERCISE_PAGE = "/exercises/scaled-dot-product-attention/"


def _idle(stacks: dict[str, Stack], tokens: dict[str, str], n: int) -> dict[str, dict]:
    """Submissions one at a time, the trees in turn (ABBA): each tree's submit -> stored,
    received -> claim and claim -> verdict, in seconds."""
    sent: dict[str, dict[int, float]] = {name: {} for name in stacks}
    names = list(stacks)
    for i in range(n):
        for name in names if i % 2 == 0 else names[::-1]:
            at, sub = submit_and_wait(tokens[name], base=stacks[name].base)
            sent[name][sub["id"]] = at
    figures = {}
    for name, stack in stacks.items():
        ids = list(sent[name])
        stored = json.loads(stack.run("shell", "-v", "0", "-c", STORED_AT.format(ids=ids)))
        rows = json.loads(stack.run("shell", "-v", "0", "-c", BURST_STATS.format(ids=ids)))
        figures[name] = {
            "total": [stored[str(pk)] - at for pk, at in sent[name].items()],
            "wait": rows["wait"],
            "work": rows["work"],
        }
    return figures


def _burst(stack: Stack, tokens: list[str], n: int, clients: int) -> tuple[float, float, float]:
    """One burst: (verdicts per second, the web's CPU a verdict, all the stack's CPU a verdict),
    CPU in milliseconds."""
    before = cpu_by_part(stack)
    ids, _ = burst_run(stack, tokens, n=n, clients=clients, base=stack.base)
    after = cpu_by_part(stack)
    stats = json.loads(stack.run("shell", "-v", "0", "-c", BURST_STATS.format(ids=ids)))
    if stats["final"] != len(ids) or stats["twice"]:
        raise SystemExit(f"{stack.root}: {stats['final']}/{len(ids)} final, {stats['twice']} twice")
    used = {part: (after[part] - before[part]) * 1e3 / len(ids) for part in after}
    whole = sum(ms for part, ms in used.items() if part != "postgresql")
    return stats["final"] / (stats["last"] - stats["first"]), used["web (gunicorn)"], whole


def _page(stacks: dict[str, Stack], n: int) -> dict[str, list[float]]:
    """From the click on Submit to the verdict on the page, in a real browser, the trees in
    turn (ABBA): seconds."""
    from playwright.sync_api import sync_playwright

    felt: dict[str, list[float]] = {name: [] for name in stacks}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium")
        tabs = {}
        for name, stack in stacks.items():
            stack.run("shell", "-v", "0", "-c", PAGE_USER_CREATE)
            tab = browser.new_page(base_url=stack.base)
            tab.goto("/accounts/login/")
            tab.get_by_label("Username").fill(PAGE_USER)
            tab.get_by_label("Password").fill(PAGE_PASSWORD)
            tab.locator("main form button[type=submit]").click()
            tab.wait_for_load_state()
            tab.goto(EXERCISE_PAGE)
            tab.locator("#editor").wait_for()
            tab.evaluate("code => window.codeEditor.setValue(code, 1)", CORRECT)
            tabs[name] = tab
        names = list(stacks)
        for i in range(n + 2):  # the first two of each warm the page's caches
            for name in names if i % 2 == 0 else names[::-1]:
                tab = tabs[name]
                panel = tab.locator("#result [data-status]")
                last = panel.get_attribute("id") if panel.count() else "none"
                t = time.perf_counter()
                tab.locator("#submit-button").click()
                tab.wait_for_selector(f'#result [data-status="passed"]:not(#{last})')
                if i >= 2:
                    felt[name].append(time.perf_counter() - t)
        browser.close()
    return felt


def _row(what: str, before: float, after: float, unit: str) -> str:
    return f"  {what:<38} {before:8.2f} {after:8.2f} {unit:<10} {after / before:6.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="the other tree (a git worktree)")
    parser.add_argument("--idle", type=int, default=100, help="submissions at idle, each tree")
    parser.add_argument("--burst", type=int, default=200, help="submissions in one burst")
    parser.add_argument("--rounds", type=int, default=2, help="bursts, each tree")
    parser.add_argument("--clients", type=int, default=16, help="threads submitting a burst")
    parser.add_argument("--users", type=int, default=200, help="accounts a burst comes from")
    parser.add_argument("--page", type=int, default=0, help="submissions in a browser, each tree")
    args = parser.parse_args()
    if not (args.before / "manage.py").exists():
        raise SystemExit(f"{args.before}: not a tree of this project (no manage.py)")

    roots = {"before": args.before.resolve(), "after": ROOT}
    stacks = {
        name: Stack(2, root=root, web_port=PORTS[name][0], redis_port=PORTS[name][1])
        for name, root in roots.items()
    }
    try:
        for stack in stacks.values():
            stack.start()
        tokens = {name: stack.tokens(max(args.users, 1)) for name, stack in stacks.items()}
        print(f"before: {roots['before']}\nafter:  {roots['after']}")
        print(f"load average at the start: {load()} (2 cores)")
        for name, stack in stacks.items():  # warm: the first grades fill caches and the zygote
            for _ in range(5):
                submit_and_wait(tokens[name][0], base=stack.base)

        idle = _idle(stacks, {name: t[0] for name, t in tokens.items()}, args.idle)
        print(f"\n{'':40} {'before':>8} {'after':>8} {'':10} {'after/before':>6}")
        print(f"at idle, {args.idle} submissions each, in turn")
        for what, key, q in (
            ("HTTP submit -> stored verdict, p50", "total", 50),
            ("HTTP submit -> stored verdict, p95", "total", 95),
            ("received -> claim (the rows), p50", "wait", 50),
            ("claim -> verdict (the rows), p50", "work", 50),
        ):
            b, a = (pct(idle[name][key], q) * 1e3 for name in ("before", "after"))
            print(_row(what, b, a, "ms"))

        bursts: dict[str, list[tuple[float, float, float]]] = {name: [] for name in stacks}
        names = list(stacks)
        for r in range(args.rounds):
            for name in names if r % 2 == 0 else names[::-1]:
                bursts[name].append(_burst(stacks[name], tokens[name], args.burst, args.clients))
        print(f"bursts of {args.burst}, {args.rounds} each, in turn (medians)")
        for what, i, unit in (
            ("verdicts per second", 0, "/s"),
            ("web CPU a verdict", 1, "ms"),
            ("the stack's CPU a verdict", 2, "ms"),
        ):
            b, a = (statistics.median(x[i] for x in bursts[name]) for name in ("before", "after"))
            print(_row(what, b, a, unit))
        for name in names:
            print(f"  {name}, each round: " + ", ".join(f"{x[0]:.1f}/s" for x in bursts[name]))
        if args.page:
            felt = _page(stacks, args.page)
            print(f"in a browser, {args.page} submissions each, in turn: click -> verdict shown")
            for what, q in (("p50", 50), ("p95", 95)):
                b, a = (pct(felt[name], q) * 1e3 for name in ("before", "after"))
                print(_row(f"click on Submit -> verdict on the page, {what}", b, a, "ms"))
        print(f"\nload average at the end: {load()}")
    finally:
        for stack in stacks.values():
            stack.stop()


if __name__ == "__main__":
    main()
