"""Runs a SandboxExecutor inside the test fence and serves it to the test process.

Started by tests/sandbox/conftest.py through fence.py (own pid namespace + pids cgroup), so
even a sandbox escape during a hostile test could not reach the team's processes. Commands and
replies are length-prefixed pickles on stdin/stdout (both ends are our trusted test code).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import pickle
import struct
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from grader.engine.executors.base import RunRequest
from grader.engine.grading import grade
from grader.engine.sandbox import SandboxExecutor, SandboxUnavailable, codec
from grader.engine.sandbox.pool import CpuPressure

LEN = struct.Struct("<Q")


class RootUidExecutor(SandboxExecutor):
    """A broken configuration (children would stay root): the sandbox must refuse to run."""

    def _config(self) -> dict[str, Any]:
        config = super()._config()
        config["uids"] = [0]
        return config


def unstartable_encode(calls: Any, *, code: Any = None, lim: Any = None, **kwargs: Any) -> bytes:
    """Asks for more memory than the hard limit the children were forked with, as when
    something lowered a child's limits before its run: the child cannot start the run."""
    if code is not None and kwargs.get("entry_point") != "probe":  # not the self-check
        lim = dataclasses.replace(lim, memory_mb=10**7)
    return REQUEST_ENCODE(calls, code=code, lim=lim, **kwargs)


REQUEST_ENCODE = codec.request_encode


def request(run: dict[str, Any], **more: Any) -> RunRequest:
    return RunRequest(**{**run, "calls": tuple(run["calls"]), **more})


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.getMessage()}")


def read_msg(stream: Any) -> Any:
    head = stream.read(LEN.size)
    if len(head) < LEN.size:
        return None
    return pickle.loads(stream.read(LEN.unpack(head)[0]))


def write_msg(stream: Any, obj: Any) -> None:
    data = pickle.dumps(obj)
    stream.write(LEN.pack(len(data)) + data)
    stream.flush()


def main() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write to the reply stream
    executor: SandboxExecutor | None = None
    while True:
        msg = read_msg(stdin)
        if msg is None:
            break
        op, kwargs = msg
        try:
            if op == "start":
                if executor is not None:
                    executor.close()
                executor = SandboxExecutor(**kwargs)
                reply: Any = None
            elif op == "run":
                assert executor is not None
                t0 = time.perf_counter()
                result = executor.run(request(kwargs))
                reply = (result, time.perf_counter() - t0, executor.zygote_starts)
            elif op == "run_overlapped":
                # The grader's own work between start and wait (the reference outputs).
                assert executor is not None
                with executor.start(request(kwargs["run"])) as run:
                    time.sleep(kwargs["work_seconds"])
                    reply = run.wait()
            elif op == "run_partial":
                # Waits for the first result, then for all of them: how many each wait saw.
                assert executor is not None
                with executor.start(request(kwargs["run"])) as run:
                    part = run.wait(at_least=1)
                    reply = (len(part.calls), run.wait())
            elif op == "run_phases":
                # The first ``after`` calls, then the rest as a second phase if ``more``
                # (and only if the first ended OK, as the grader does).
                assert executor is not None
                calls = kwargs["run"]["calls"]
                first_calls = {**kwargs["run"], "calls": calls[: kwargs["after"]]}
                with executor.start(request(first_calls, second_phase=True)) as run:
                    first = run.wait()
                    last = None
                    if kwargs["more"] and first.status == "ok":
                        run.more(calls[kwargs["after"] :])
                        last = run.wait()
                reply = (first, last)
            elif op == "grade":
                # A whole grade, as a worker makes it: the student's run, then any custom
                # check's run of its own, through this one executor.
                assert executor is not None
                reply = grade(executor=executor, **kwargs)
            elif op == "runs_busy":
                # Runs with the pauses given before each; whether each counted as busy.
                assert executor is not None
                # The gap alone: what the machine's other tasks do must not decide a test.
                executor.cpu_pressure = CpuPressure(None)
                busy = []
                for pause in kwargs["pauses"]:
                    time.sleep(pause)
                    executor.run(request(kwargs["run"]))
                    busy.append(executor.busy)
                reply = busy
            elif op == "self_check":
                assert executor is not None
                executor.self_check()
                reply = executor.zygote_starts
            elif op == "root_uid":
                # Fail closed: start a sandbox whose children would keep uid 0.
                broken = RootUidExecutor(slot=kwargs.get("slot"), start=False)
                try:
                    try:
                        broken.self_check()
                        refused = ""
                    except SandboxUnavailable as e:
                        refused = str(e)
                    result = broken.run(request(kwargs["run"]))
                finally:
                    broken.close()
                reply = (refused, result)
            elif op == "unstartable":
                # A run its child cannot start: what the caller gets, and what was logged.
                lines = _Lines()
                logging.getLogger("grader.engine.sandbox").addHandler(lines)
                codec.request_encode = unstartable_encode
                broken = SandboxExecutor()
                try:
                    result = broken.run(request(kwargs["run"]))
                finally:
                    codec.request_encode = REQUEST_ENCODE
                    broken.close()
                    logging.getLogger("grader.engine.sandbox").removeHandler(lines)
                reply = (result, lines.lines)
            elif op == "kill_zygote":
                # Trusted test code killing the sandbox from outside (as a crash would).
                zygote = executor._pool.zygote if executor is not None else None
                assert zygote is not None
                os.killpg(zygote.proc.pid, 9)
                zygote.proc.wait()
                reply = executor.zygote_starts
            elif op == "cgroup":
                zygote = executor._pool.zygote if executor is not None else None
                assert executor is not None and zygote is not None
                from grader.engine.sandbox import launcher

                group = executor._pool.cgroup

                def members() -> list[str]:
                    return (group / "cgroup.procs").read_text().split() if group else []

                def alive(pid: int) -> bool:
                    # A child that has exited but is not reaped yet still shows in /proc, and
                    # has already left its cgroup.
                    try:
                        stat = Path(f"/proc/{pid}/stat").read_text()
                    except OSError:
                        return False
                    return stat.rsplit(")", 1)[1].split()[0] != "Z"

                # A child may be forked ahead (or reaped) while the tree is read: a process of
                # the tree must be in the group just before or just after.
                before = members()
                tree = [p for p in launcher.process_tree(zygote.proc.pid) if alive(p)]
                procs = sorted(set(before) | set(members()))
                reply = (str(group) if group else None, sorted(map(int, procs)), sorted(tree))
            elif op == "close":
                if executor is not None:
                    executor.close()
                    executor = None
                reply = None
            else:
                raise ValueError(op)
            write_msg(stdout, ("ok", reply))
        except BaseException as e:
            write_msg(stdout, ("err", f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))
    if executor is not None:
        executor.close()


if __name__ == "__main__":
    main()
