"""grader.worker.worker_identity: unique per process, across pid namespaces and forks."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_worker_identities_differ_across_pid_namespaces_with_the_same_pid() -> None:
    import shutil
    import subprocess
    import sys

    from tests.pipeline.stack import ROOT

    if not shutil.which("unshare"):
        pytest.skip("unshare is not installed")
    # Each python is pid 1 of its own pid namespace, as the first process of a container is.
    argv = ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c"]
    code = "import os; from grader.worker import worker_identity as w; print(os.getpid(), w())"
    outs = [
        subprocess.run(
            [*argv, code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
        ).stdout.split()
        for _ in range(2)
    ]
    assert outs[0][0] == outs[1][0] == "1"
    assert outs[0][1] != outs[1][1]


def test_a_forked_process_gets_an_identity_of_its_own() -> None:
    import multiprocessing

    from grader.worker import worker_identity

    mine = worker_identity()
    with multiprocessing.get_context("fork").Pool(1) as pool:
        theirs = pool.apply(worker_identity)
    assert theirs != mine
    assert worker_identity() == mine  # stable within a process
