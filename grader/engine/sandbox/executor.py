"""The trusted side of the sandbox: SandboxExecutor.

One per worker process. Its pool (pool.py) keeps a zygote under bubblewrap and children forked
and layered ahead of time; each run takes one fresh child (driver.py), sends it the request
encoded by codec.py and reads back framed .npy outputs (headers checked before any array is
built; see npy.py) and what the code printed. Student code never runs in this process, nothing
here trusts a byte the child wrote, and nothing here calls back into the caller.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

from grader.engine import limits as L
from grader.engine.executors.base import Limits, RunRequest, RunResult, RunStatus, run_whole
from grader.engine.sandbox import codec, selfcheck
from grader.engine.sandbox.driver import SandboxRun
from grader.engine.sandbox.messages import MSG_INTERNAL
from grader.engine.sandbox.pool import (
    ALLOW_NO_LANDLOCK_ENV,
    ChildPool,
    CpuPressure,
    SandboxUnavailable,
)

log = logging.getLogger("grader.engine.sandbox")

PROJECT_ROOT = Path(__file__).resolve().parents[2]

__all__ = ["CpuPressure", "SandboxExecutor", "SandboxUnavailable"]


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


class _FailedRun:
    """A run refused before it started (the sandbox is unavailable: fail closed)."""

    def __init__(self, result: RunResult) -> None:
        self._result = result

    def wait(self, at_least: int | None = None) -> RunResult:
        return self._result

    def more(self, calls: Any) -> None:
        raise RuntimeError("this run takes no more calls")

    def close(self) -> None:
        pass

    def __enter__(self) -> _FailedRun:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class SandboxExecutor:
    """Runs student code in a warm, layered sandbox. One run at a time per instance: a lock
    is held from ``start`` until the run is closed."""

    def __init__(
        self,
        *,
        allow_no_landlock: bool | None = None,
        slot: int | None = None,
        start: bool = True,
    ) -> None:
        # The env default lets `manage.py grade` and tests work without Django settings; the
        # worker passes settings.SANDBOX_ALLOW_NO_LANDLOCK explicitly.
        if allow_no_landlock is None:
            allow_no_landlock = _env_flag(ALLOW_NO_LANDLOCK_ENV)
        self.allow_no_landlock = allow_no_landlock
        self._lock = threading.Lock()
        self._checked = False
        self._closed = False
        self._parts = codec.PartCache()
        self._pool = ChildPool(slot)
        self.slot = self._pool.slot
        self.uids = self._pool.uids
        if start:
            try:
                with self._lock:
                    self._start()
            except BaseException:
                self.close()
                raise

    # --- public -------------------------------------------------------------------------------

    def start(self, request: RunRequest) -> SandboxRun | _FailedRun:
        lim = L.clamp(request.limits)
        encoded = codec.request_encode(
            request.calls,
            code=request.code,
            entry_point=request.entry_point,
            lim=lim,
            second_phase=request.second_phase,
        )
        self._lock.acquire()
        released = False

        def end(broken: bool) -> None:
            nonlocal released
            if broken:
                self._stop()
            if not released:
                released = True
                self._lock.release()

        try:
            if self._closed:
                raise RuntimeError("SandboxExecutor is closed")
            try:
                self._ensure_ready()
            except (SandboxUnavailable, OSError) as e:
                log.critical("sandbox: refusing to run (fail closed): %s", e)
                end(False)
                return _FailedRun(RunResult(RunStatus.INTERNAL, [], MSG_INTERNAL))
            return SandboxRun(
                self._pool,
                encoded,
                request.calls,
                entry_point=request.entry_point,
                lim=lim,
                second_phase=request.second_phase,
                parts=self._parts,
                on_end=end,
            )
        except BaseException:
            end(False)
            raise

    def run(self, request: RunRequest) -> RunResult:
        """Every call of ``request`` in one run."""
        return run_whole(self, request)

    def self_check(self) -> None:
        """Run escape probes through the sandbox; raise SandboxUnavailable if any succeeds."""
        with self._lock:
            self._checked = False
            self._ensure_ready()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._stop()
            self._pool.release()

    @property
    def busy(self) -> bool:
        """Whether the last run started right after the one before, or while tasks queued for
        the CPU (the children forked then skip their warm-up)."""
        return self._pool.busy

    @property
    def cpu_pressure(self) -> CpuPressure:
        return self._pool.cpu_pressure

    @cpu_pressure.setter
    def cpu_pressure(self, value: CpuPressure) -> None:
        self._pool.cpu_pressure = value

    @property
    def zygote_starts(self) -> int:
        """How often a zygote was (re)started: tests assert it stays 1."""
        return self._pool.starts

    @property
    def landlock_abi(self) -> int:
        zygote = self._pool.zygote
        return int(zygote.hello.get("landlock_abi", 0)) if zygote else 0

    # --- zygote lifecycle ---------------------------------------------------------------------

    def _ensure_ready(self) -> None:
        if not self._pool.alive():
            if self._pool.zygote is not None:
                log.warning("sandbox: zygote of slot %d died; restarting it", self.slot)
                self._stop()
            self._start()
        if not self._checked:
            self._run_self_check()

    def _start(self) -> None:
        self._checked = False
        self._pool.start(self._config())

    def _stop(self) -> None:
        self._checked = False
        self._pool.stop()

    def _config(self) -> dict[str, Any]:
        """What the zygote and its children are told (nothing secret: it is visible inside)."""
        return {
            "uids": list(self._pool.uids),
            "allow_no_landlock": self.allow_no_landlock,
            "max_request_bytes": L.REQUEST_MAX_BYTES,
            "max_array_bytes": L.OUTPUT_ARRAY_MAX_BYTES,
            "area_bytes": codec.AREA_BYTES,
            "max_error_chars": L.ERROR_TEXT_MAX_CHARS,
            "rlimits": {
                "nproc": L.RLIMIT_NPROC,
                "nofile": L.RLIMIT_NOFILE,
                "fsize": L.RLIMIT_FSIZE,
                "cpu_max": int(L.CPU_SECONDS.high),
                "memory_max_mb": int(L.MEMORY_MB.high),
            },
        }

    def _run_self_check(self) -> None:
        code = selfcheck.PROBE_CODE.format(project=str(PROJECT_ROOT), uids=list(self._pool.uids))
        lim = Limits(wall_seconds=10.0, cpu_seconds=5.0, memory_mb=256)
        calls = selfcheck.probe_calls()
        request = codec.request_encode(calls, code=code, entry_point="probe", lim=lim)
        with SandboxRun(
            self._pool, request, calls, entry_point="probe", lim=lim, second_phase=False
        ) as run:
            result = run.wait()
        if run.failure is not None:
            self._stop()
            raise SandboxUnavailable(f"self-check could not run: {run.failure}")
        bad = selfcheck.failures(result, landlock=self.landlock_abi >= 1)
        if bad:
            for line in bad:
                log.critical("sandbox self-check FAILED: %s", line)
            self._stop()
            raise SandboxUnavailable("sandbox self-check failed: " + "; ".join(bad))
        self._checked = True
        log.info("sandbox: self-check passed (%d escape probes blocked)", len(calls))
