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

from grader.engine.executors.base import Gate
from grader.engine.sandbox import SandboxExecutor, SandboxUnavailable
from grader.engine.sandbox.executor import CpuPressure

LEN = struct.Struct("<Q")


class RootUidExecutor(SandboxExecutor):
    """A broken configuration (children would stay root): the sandbox must refuse to run."""

    def _config(self, ctrl_fd: int) -> dict[str, Any]:
        config = super()._config(ctrl_fd)
        config["uids"] = [0]
        return config


class UnstartableRunExecutor(SandboxExecutor):
    """Asks for more memory than the hard limit its children were forked with, as when
    something lowered a child's limits before its run: the child cannot start the run."""

    @staticmethod
    def _encode(calls: Any, *, code: Any = None, lim: Any = None, **kwargs: Any) -> bytes:
        if code is not None and kwargs.get("entry_point") != "probe":  # not the self-check
            lim = dataclasses.replace(lim, memory_mb=10**7)
        return SandboxExecutor._encode(calls, code=code, lim=lim, **kwargs)


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
                result = executor.run(**kwargs)
                reply = (result, time.perf_counter() - t0, executor.zygote_starts)
            elif op == "run_with_hook":
                # The grader's while_running hook: our trusted work, run while the child runs.
                assert executor is not None
                hooked: list[bool] = []

                def hook() -> None:
                    hooked.append(True)
                    if kwargs["hook_raises"]:
                        raise RuntimeError("the caller's own work failed")

                result = executor.run(**kwargs["run"], while_running=hook)
                reply = (result, len(hooked))
            elif op == "run_gated":
                # A gate whose answer (or failure) the test chooses; it records what it saw.
                assert executor is not None
                seen: list[int] = []

                def go_on(results: Any) -> bool:
                    seen.append(len(results))
                    if kwargs["answer"] is None:
                        raise RuntimeError("the caller's own check failed")
                    return bool(kwargs["answer"])

                progress: list[int] = []

                def so_far(results: Any) -> bool:
                    progress.append(len(results))
                    return bool(kwargs.get("early"))  # True: wanted whatever comes

                gate = Gate(after=kwargs["after"], go_on=go_on, progress=so_far)
                result = executor.run(**kwargs["run"], gate=gate)
                reply = (result, seen, progress)
            elif op == "runs_busy":
                # Runs with the pauses given before each; whether each counted as busy.
                assert executor is not None
                # The gap alone: what the machine's other tasks do must not decide a test.
                executor.cpu_pressure = CpuPressure(None)
                busy = []
                for pause in kwargs["pauses"]:
                    time.sleep(pause)
                    executor.run(**kwargs["run"])
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
                    result = broken.run(**kwargs["run"])
                finally:
                    broken.close()
                reply = (refused, result)
            elif op == "unstartable":
                # A run its child cannot start: what the caller gets, and what was logged.
                lines = _Lines()
                logging.getLogger("grader.engine.sandbox").addHandler(lines)
                broken = UnstartableRunExecutor()
                try:
                    result = broken.run(**kwargs["run"])
                finally:
                    broken.close()
                    logging.getLogger("grader.engine.sandbox").removeHandler(lines)
                reply = (result, lines.lines)
            elif op == "kill_zygote":
                # Trusted test code killing the sandbox from outside (as a crash would).
                assert executor is not None and executor._zygote is not None
                os.killpg(executor._zygote.proc.pid, 9)
                executor._zygote.proc.wait()
                reply = executor.zygote_starts
            elif op == "cgroup":
                assert executor is not None and executor._zygote is not None
                from grader.engine.sandbox import launcher

                group = executor._cgroup

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
                tree = [p for p in launcher.process_tree(executor._zygote.proc.pid) if alive(p)]
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
