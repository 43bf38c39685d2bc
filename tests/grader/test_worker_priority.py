"""Graders yield the CPU to the web: a worker process lowers its own priority."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from grader import worker


def _in_a_child(body) -> dict[str, object]:
    """Run body() in a forked child (priorities cannot go back up for non-root, and must not
    change for the test process) and return what it reported."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running pytest's teardown
        try:
            os.close(read)
            os.write(write, json.dumps(body()).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def _lower_with_a_thread_running() -> dict[str, object]:
    started, stop = threading.Event(), threading.Event()
    native: list[int] = []

    def other() -> None:
        native.append(threading.get_native_id())
        started.set()
        stop.wait(5)

    thread = threading.Thread(target=other)
    thread.start()
    started.wait(5)
    worker.worker_priority_lower()
    report = {
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "policy": os.sched_getscheduler(0),
        "thread_nice": os.getpriority(os.PRIO_PROCESS, native[0]),
        "thread_policy": os.sched_getscheduler(native[0]),
    }
    # What the zygote and the sandbox children will be: forked after the call.
    child = os.fork()
    if child == 0:
        os._exit(os.getpriority(os.PRIO_PROCESS, 0))
    report["forked_nice"] = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    stop.set()
    thread.join()
    return report


@pytest.fixture
def fake_cgroups(tmp_path, monkeypatch: pytest.MonkeyPatch):
    """A cpu hierarchy in a temporary directory: the tests never move into a real group."""
    own = next(
        line.split(":", 2)[2].strip()
        for line in Path("/proc/self/cgroup").read_text().splitlines()
        if "cpu" in line.split(":", 2)[1].split(",")
    )
    here = tmp_path / own.lstrip("/")
    here.mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(worker, "CPU_CGROUP_ROOT", tmp_path)
    return here / worker.CPU_CGROUP_NAME


def test_the_worker_lowers_every_thread_and_what_it_forks(fake_cgroups) -> None:
    if os.getpriority(os.PRIO_PROCESS, 0) > worker.WORKER_NICENESS:
        pytest.skip("the test process already runs below the graders' priority")
    report = _in_a_child(_lower_with_a_thread_running)
    assert report["nice"] == worker.WORKER_NICENESS
    assert report["thread_nice"] == worker.WORKER_NICENESS
    assert report["forked_nice"] == worker.WORKER_NICENESS
    assert report["policy"] == os.SCHED_BATCH
    assert report["thread_policy"] == os.SCHED_BATCH


def test_it_joins_a_cpu_cgroup_weighted_like_its_niceness(fake_cgroups) -> None:
    group = worker.worker_cpu_cgroup_join(niceness=10)
    assert group == fake_cgroups
    assert (group / "cpu.shares").read_text() == "110"  # the kernel's weight of nice 10
    assert (group / "cgroup.procs").read_text() == str(os.getpid())


def test_no_cgroup_hierarchy_is_no_error(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "CPU_CGROUP_ROOT", tmp_path / "absent")
    assert worker.worker_cpu_cgroup_join(niceness=10) is None


def test_niceness_zero_leaves_everything_alone(fake_cgroups) -> None:
    def body() -> dict[str, object]:
        before = (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0))
        worker.worker_priority_lower(niceness=0)
        after = (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0))
        return {"same": before == after}

    assert _in_a_child(body)["same"]
    assert not fake_cgroups.exists()


def test_it_never_raises_the_priority_of_a_process_already_lower(fake_cgroups) -> None:
    def body() -> dict[str, object]:
        os.setpriority(os.PRIO_PROCESS, 0, worker.WORKER_NICENESS + 5)
        worker.worker_priority_lower()
        return {"nice": os.getpriority(os.PRIO_PROCESS, 0)}

    assert _in_a_child(body)["nice"] == worker.WORKER_NICENESS + 5


def test_a_pool_process_lowers_itself_before_the_zygote_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(worker, "worker_priority_lower", lambda: calls.append("lower"))
    monkeypatch.setattr(worker, "executor_get", lambda: calls.append("zygote"))
    worker._warm_up()
    assert calls == ["lower", "zygote"]


def test_both_celery_signals_are_connected() -> None:
    from celery.signals import worker_init, worker_process_init

    def connected(signal, handler) -> bool:
        return any(
            (ref() if callable(ref) and not hasattr(ref, "__code__") else ref) is handler
            for _, ref in signal.receivers
        )

    assert connected(worker_process_init, worker._warm_up)
    assert connected(worker_init, worker._lower_main)
