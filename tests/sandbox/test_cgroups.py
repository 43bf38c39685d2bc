"""A worker killed with -9 leaves its slot's pids cgroup behind; the next zygote start of that
slot removes it."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from grader.engine import limits
from grader.engine.sandbox import launcher
from tests.sandbox import fence
from tests.sandbox.conftest import CANARY, RUNNER, FencedSandbox

# A slot the other sandbox tests don't ask for (test_units uses the last two).
SLOT = limits.MAX_SLOTS - 3


class WorkerFence(FencedSandbox):
    """A fenced runner in a pids group of the given name: one worker (service, container)."""

    def __init__(self, name: str) -> None:
        import subprocess
        import sys

        self.group = fence._own_pids_cgroup() / f"{name}-{os.getpid()}"
        self.group.mkdir(exist_ok=True)
        (self.group / "pids.max").write_text(str(fence.FENCE_PIDS_MAX))
        env = dict(os.environ, SANDBOX_TEST_CANARY=CANARY)
        self.proc = fence.popen_fenced(
            [sys.executable, str(RUNNER)],
            self.group,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.last_seconds = 0.0
        self.zygote_starts = 0


@pytest.fixture
def killed_worker_group() -> tuple[Path, Path | None]:
    """A fenced executor of SLOT killed with -9, like a worker: (its slot group, its fence)."""
    if not Path("/sys/fs/cgroup/pids").is_dir():
        pytest.skip("no pids cgroup hierarchy here")
    box = WorkerFence("sandbox-test-killed-worker")
    box.start(slot=SLOT)
    group = box.call("cgroup")[0]
    if group is None:
        box.close()
        pytest.skip("the sandbox could not make a pids cgroup here")
    box.proc.send_signal(signal.SIGKILL)  # unshare --kill-child: the whole fence dies with it
    box.proc.wait(10)
    group = Path(group)
    deadline = time.monotonic() + 10
    while (group / "cgroup.procs").read_text().split() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert group.is_dir()  # the leak: nobody ran close()
    yield group, box.group
    fence.remove_cgroup(box.group)


def test_a_zygote_start_removes_the_stale_group_of_its_slot(killed_worker_group) -> None:  # type: ignore[no-untyped-def]
    stale, _ = killed_worker_group
    box = WorkerFence("sandbox-test-next-worker")  # in a group of its own
    try:
        box.start(slot=SLOT)
        ours = Path(box.call("cgroup")[0])
        assert ours != stale
        assert not stale.exists()
        assert ours.is_dir()  # its own group is kept, and used
    finally:
        box.close()


def test_groups_with_processes_and_of_other_slots_are_left_alone(killed_worker_group) -> None:  # type: ignore[no-untyped-def]
    stale, parent = killed_worker_group
    assert parent is not None
    other = parent / f"grader-sandbox-{SLOT - 1}"
    other.mkdir()
    try:
        assert launcher.cgroups_stale_remove(SLOT - 2, keep=None) == 0
        assert stale.exists() and other.exists()
        assert launcher.cgroups_stale_remove(SLOT, keep=stale) == 0  # our own group is kept
        assert stale.exists()
    finally:
        other.rmdir()


def test_cgroup_clear_kills_what_a_dead_holder_left_in_the_group(killed_worker_group) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    stale, _ = killed_worker_group
    # A trusted stand-in for a leftover sandbox process: `sleep`, moved into the slot's group.
    leftover = subprocess.Popen(["sleep", "60"])
    try:
        (stale / "cgroup.procs").write_text(str(leftover.pid))
        assert launcher.cgroups_stale_remove(SLOT, keep=None) == 0  # not empty: left alone
        assert launcher.cgroup_clear(stale) == 1
        assert leftover.wait(10) == -signal.SIGKILL
    finally:
        if leftover.poll() is None:
            os.kill(leftover.pid, signal.SIGKILL)
            leftover.wait()
