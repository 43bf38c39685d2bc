"""The zygote: a warm Python with numpy imported, forking one child per grade ahead of time.

Runs inside bubblewrap (see grader/engine/sandbox/launcher.py), started as
``python -I -B /sandbox/zygote.py CTRL_FD``; its configuration is the first control message.
It never holds hidden tests: the trusted parent talks to each child directly over pipes whose
ends the zygote hands over with SCM_RIGHTS. The zygote only forks, kills on request and
reports exits.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves the script dir out

import builtins
import contextlib
import fcntl
import functools
import gc
import io
import json
import linecache
import mmap
import select
import signal
import socket
import time
import traceback
import types
from typing import Any

import layers
import protocol as p

STUDENT_FILENAME = "submission.py"
PIPE_SIZE = 1 << 20
# Tracebacks keep the innermost frames only: formatting 300k frames of runaway recursion took
# seconds of the student's time budget.
TRACEBACK_FRAMES = 200

# The real builtins, put back after the student's module loads and after each call: code that
# replaces len or isinstance must not break the harness that reports its results (it can only
# ever forge its own outputs, which the trusted side judges anyway).
BUILTINS = dict(builtins.__dict__)


def restore_builtins() -> None:
    builtins.__dict__.update(BUILTINS)


def send(ctrl: socket.socket, msg: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(msg).encode()
    if fds:
        socket.send_fds(ctrl, [data], fds)
    else:
        ctrl.send(data)


# ----------------------------------------------------------------------------------------------
# Zygote


def check_outer_layers() -> None:
    """Refuse to serve if bubblewrap did not give us what the launcher asked for."""
    if os.getuid() != 0:
        raise layers.LayerError("zygote must start as (namespaced) root to drop to a slot uid")
    caps = layers.capabilities()
    # The bounding set stays full (dropping it needs CAP_SETPCAP); it only matters across
    # execve of privileged files, which no_new_privs, seccomp and Landlock all forbid.
    for key in ("CapEff", "CapPrm", "CapInh", "CapAmb"):
        if caps[key] & ~layers.ZYGOTE_CAPS:
            raise layers.LayerError(f"bubblewrap left extra capabilities: {key}={caps[key]:#x}")
    if caps["CapEff"] != layers.ZYGOTE_CAPS:
        raise layers.LayerError(f"zygote lacks setuid/setgid/kill: CapEff={caps['CapEff']:#x}")
    names = sorted(name for _, name in socket.if_nameindex())
    if names != ["lo"]:
        raise layers.LayerError(f"not in an empty network namespace: {names}")
    if os.getpid() > 16:
        raise layers.LayerError("not in a fresh pid namespace")
    for probe in ("/usr/.sandbox-probe", "/sandbox/.sandbox-probe"):
        try:
            with open(probe, "w"):
                pass
        except OSError:
            continue
        os.unlink(probe)
        raise layers.LayerError(f"bind mount is writable: {probe}")


def malloc_tune() -> None:
    """Set once in the zygote; every child inherits glibc's malloc parameters across fork."""
    import ctypes

    libc = ctypes.CDLL(None)
    libc.mallopt(M_MMAP_THRESHOLD, 64 << 20)
    libc.mallopt(M_TRIM_THRESHOLD, 256 << 20)


def warm_imports() -> None:
    # numpy 2 imports these lazily; a child would pay for them (and might not be able to read
    # them after the uid drop if a parent directory were private).
    import numpy as np
    import numpy.fft
    import numpy.linalg
    import numpy.random

    a = np.ones((8, 64))
    (a @ a.T).sum()
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    buf.seek(0)
    np.load(buf, allow_pickle=False)
    traceback.TracebackException.from_exception(ValueError("warm"))
    import pyseccomp  # noqa: F401  (fails closed here if libseccomp is unreachable)


def zygote_main() -> None:
    ctrl = socket.socket(fileno=int(sys.argv[1]))
    os.set_inheritable(ctrl.fileno(), False)
    cfg = json.loads(ctrl.recv(65536))  # the first message: our configuration
    try:
        layers.prctl(layers.PR_SET_DUMPABLE, 0)
        check_outer_layers()
        warm_imports()
        malloc_tune()  # before any fork: warm and cold children alike inherit it
        libc_mmap()
        abi = layers.landlock_abi()
        ruleset: layers.Ruleset | None = None
        if abi >= 1:
            ruleset = layers.build_ruleset(abi)
        elif not cfg["allow_no_landlock"]:
            raise layers.LayerError(
                "Landlock is not available and SANDBOX_ALLOW_NO_LANDLOCK is off"
            )
        global SECCOMP, ZYGOTE_STATE
        # Read here, where no child can reach (it runs as another uid): each child sets its
        # own state from this, at the fork and again right before the student's code.
        ZYGOTE_STATE = layers.process_state()
        try:
            SECCOMP = layers.seccomp_program()
        except Exception as e:  # each child builds the same filter itself, only slower
            print(f"zygote: seccomp filter not precompiled: {e}", file=sys.stderr)
        # Everything alive now is shared with every child: keep the collector from walking (and
        # so copying, page by page) it in each of them.
        gc.collect()
        gc.freeze()
    except Exception as e:
        send(ctrl, {"op": "fatal", "msg": f"{type(e).__name__}: {e}"})
        os._exit(1)
    send(
        ctrl,
        {
            "op": "hello",
            "pid": os.getpid(),
            "landlock_abi": abi,
            "landlock_net": bool(ruleset and ruleset.net),
            "landlock_scoped": bool(ruleset and ruleset.scoped),
        },
    )
    serve(ctrl, cfg, ruleset)


# How long a spawn waits for a child uid to come free (a killed child still dying holds its own).
UID_WAIT_SECONDS = 5.0


def reap(ctrl: socket.socket, live: dict[int, tuple[int, int]], pidfd: int) -> None:
    """Reap one exited child and report its exit to the parent."""
    pid, _ = live.pop(pidfd)
    os.close(pidfd)
    _, status, ru = os.wait4(pid, 0)
    msg: dict[str, Any] = {
        "op": "exit",
        "pid": pid,
        "cpu": ru.ru_utime + ru.ru_stime,
        "maxrss_kb": ru.ru_maxrss,
        "minflt": ru.ru_minflt,  # page faults: most of what a child costs (bench)
    }
    if os.WIFSIGNALED(status):
        msg["signal"] = os.WTERMSIG(status)
    else:
        msg["code"] = os.WEXITSTATUS(status)
    send(ctrl, msg)


def free_uid(ctrl: socket.socket, cfg: dict[str, Any], live: dict[int, tuple[int, int]]) -> int:
    """A uid of this slot that no live child holds, waiting for exits if need be: two children
    never share a uid, so neither can change the other."""
    deadline = time.monotonic() + UID_WAIT_SECONDS
    while True:
        taken = {uid for _, uid in live.values()}
        for uid in cfg["uids"]:
            if uid not in taken:
                return uid
        left = deadline - time.monotonic()
        if left <= 0:
            raise layers.LayerError("every child uid of this slot is held by a live child")
        for fd in select.select(list(live), [], [], left)[0]:
            reap(ctrl, live, fd)


def serve(ctrl: socket.socket, cfg: dict[str, Any], ruleset: layers.Ruleset | None) -> None:
    live: dict[int, tuple[int, int]] = {}  # pidfd -> (pid, uid)
    zygote_pid = os.getpid()
    while True:
        ready, _, _ = select.select([ctrl, *live], [], [])
        for fd in ready:
            if fd is not ctrl and fd in live:
                reap(ctrl, live, fd)
        if ctrl in ready:
            data = ctrl.recv(4096)
            if not data:  # the parent is gone: take everything down with us
                for pid, _ in live.values():
                    os.kill(pid, signal.SIGKILL)
                os._exit(0)
            msg = json.loads(data)
            if msg["op"] == "spawn":
                uid = free_uid(ctrl, cfg, live)
                pid, pidfd = spawn(ctrl, cfg, ruleset, zygote_pid, uid, warm=msg.get("warm", True))
                live[pidfd] = (pid, uid)
            elif msg["op"] == "kill":
                # Only our own, not yet reaped children: a reaped pid could have been reused.
                if any(pid == msg["pid"] for pid, _ in live.values()):
                    # Its process group (it is a session leader; it cannot fork, but a group
                    # kill is what the watchdog promises), then the pid in case setsid has
                    # not happened yet.
                    with contextlib.suppress(OSError):
                        os.killpg(msg["pid"], signal.SIGKILL)
                    os.kill(msg["pid"], signal.SIGKILL)


def spawn(
    ctrl: socket.socket,
    cfg: dict[str, Any],
    ruleset: layers.Ruleset | None,
    zygote_pid: int,
    uid: int,
    *,
    warm: bool = True,
) -> tuple[int, int]:
    req_r, req_w = os.pipe2(os.O_CLOEXEC)
    res_r, res_w = os.pipe2(os.O_CLOEXEC)
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    fcntl.fcntl(req_w, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    # Sparse: only the pages the child writes are ever allocated.
    area = os.memfd_create("results", os.MFD_CLOEXEC)
    os.ftruncate(area, cfg["area_bytes"])
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = p.EXIT_LAYER_FAILED
        try:
            ctrl.close()
            code = child_main(cfg, ruleset, zygote_pid, uid, req_r, res_w, out_w, area, warm=warm)
        finally:
            os._exit(code)  # never fall back into the zygote's loop
    for fd in (req_r, res_w, out_w):
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    send(ctrl, {"op": "child", "pid": pid}, [req_w, res_r, out_r, area])
    for fd in (req_w, res_r, out_r, area):
        os.close(fd)
    return pid, pidfd


# ----------------------------------------------------------------------------------------------
# Child: apply every layer, then wait for one request.


def child_main(
    cfg: dict[str, Any],
    ruleset: layers.Ruleset | None,
    zygote_pid: int,
    uid: int,
    req_r: int,
    res_w: int,
    out_w: int,
    area: int,
    *,
    warm: bool = True,
) -> int:
    res_fd = res_w
    try:
        os.setsid()
        layers.prctl(layers.PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != zygote_pid:
            raise layers.LayerError("zygote died during the fork")
        layers.reset_signals()
        fixed_fds(ruleset, req_r, res_w, out_w, area)
        res_fd = p.CHILD_RESULT_FD
        global AREA
        AREA = ResultArea(p.CHILD_AREA_FD, cfg["area_bytes"])
        os.close(p.CHILD_AREA_FD)
        apply_layers(cfg, ruleset, uid)
    except BaseException as e:
        with contextlib.suppress(OSError):
            p.write_all(res_fd, p.frame(p.LAYER_FAILED, f"{type(e).__name__}: {e}".encode()))
        return p.EXIT_LAYER_FAILED
    # READY means every layer is applied: the warm-up below is our own code, already running
    # under all of them, and it stops as soon as a request is waiting.
    p.write_all(p.CHILD_RESULT_FD, p.frame(p.READY, b""))
    # Skipped when the worker is busy (grades back to back): the warm-up then saves no waiting,
    # only shifts CPU from the grade to this child, and costs it besides.
    if warm:
        with contextlib.suppress(Exception):  # only an optimisation: never a reason not to serve
            warm_child(cfg, request_pending)
    return handle_request(cfg)


# glibc mallopt parameters: keep arrays of a grade on the heap and freed memory mapped, so a
# grade does not pay fresh-page faults (a 64x512 float64 input is above the default mmap
# threshold and would be mapped and unmapped at each call).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
WARM_HEAP_BYTES = 512 * 1024

# The seccomp filter, compiled once by the zygote (None: each child builds its own).
SECCOMP: layers.SeccompProgram | None = None
# The zygote's own state (limits, priority, placement), read before it forks any child.
ZYGOTE_STATE: layers.ProcessState | None = None
# A child's state once its layers are applied, computed from ZYGOTE_STATE and the configuration
# only (never read back from the child, which the student's code could have changed).
CHILD_STATE: layers.ProcessState | None = None


def request_pending() -> bool:
    return bool(select.select([p.CHILD_REQUEST_FD], [], [], 0)[0])


def warm_child(cfg: dict[str, Any], pending: Any) -> None:
    """Touch what a grade touches, while waiting for one: the page faults and cold code paths of
    a fresh fork (a millisecond or two) are paid here instead of inside the student's time."""
    import numpy as np

    # Grow the heap by what a grade allocates (its request, the copies of its inputs), so
    # those land on pages already faulted in: the grade saves more than this costs here.
    scratch = np.ones(WARM_HEAP_BYTES // 8)
    del scratch

    def attention(q: Any, k: Any, v: Any, mask: Any = None) -> Any:
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        s = s - s.max(axis=-1, keepdims=True)
        w = np.exp(s)
        w /= w.sum(axis=-1, keepdims=True)
        return w @ v

    for shape in ((8, 64), (2, 3, 4, 8)):
        if pending():  # a grade is waiting: it matters more than a warm cache
            return
        blob = np.ones(shape).tobytes()
        q = np.frombuffer(blob, dtype=np.dtype("<f8")).reshape(shape).copy()
        mask = np.tril(np.ones(shape[-2:][:1] * 2, dtype=bool))
        encode_array(attention(q, q, q, mask), cfg["max_array_bytes"])
        encode_array(attention(q, q, q), cfg["max_array_bytes"])
    np.asarray([1.0, 2.0]).astype(np.float32).mean()
    json.loads(json.dumps({"calls": [{"args": [{"a": 0, "shape": [8, 64]}]}]}))
    compile("def f(x):\n    return x\n", STUDENT_FILENAME, "exec", dont_inherit=True)
    restore_builtins()
    # No traceback is formatted here: that cost every child noticeable CPU, for the few
    # submissions that raise (docs/performance.md).


def fixed_fds(
    ruleset: layers.Ruleset | None, req_r: int, res_w: int, out_w: int, area: int
) -> None:
    """Only the descriptors we need, at fixed numbers; everything inherited is closed."""
    devnull = os.open("/dev/null", os.O_RDONLY)
    wanted = [devnull, out_w, out_w, res_w, req_r, area, ruleset.fd if ruleset else devnull]
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100 + i) for i, fd in enumerate(wanted)]
    for target, fd in enumerate(high):
        os.dup2(fd, target, inheritable=False)
    os.closerange(len(high), 1 << 16)
    if not ruleset:
        os.close(p.CHILD_RULESET_FD)


def apply_layers(cfg: dict[str, Any], ruleset: layers.Ruleset | None, uid: int) -> None:
    import resource

    os.environ.clear()  # also unsetenv()s each variable
    os.chdir("/")

    if ZYGOTE_STATE is None:
        raise layers.LayerError("the zygote's state was never read")
    lim = cfg["rlimits"]
    # Every limit from the zygote's, these lowered; the largest CPU and memory an instructor
    # may set (each request lowers them to its own values).
    as_max = layers.vm_size_bytes() + lim["memory_max_mb"] * 2**20
    global CHILD_STATE
    CHILD_STATE = ZYGOTE_STATE.with_rlimits(
        {
            resource.RLIMIT_CORE: (0, 0),
            resource.RLIMIT_FSIZE: (lim["fsize"], lim["fsize"]),
            resource.RLIMIT_NOFILE: (lim["nofile"], lim["nofile"]),
            resource.RLIMIT_NPROC: (lim["nproc"], lim["nproc"]),
            resource.RLIMIT_MEMLOCK: (0, 0),
            resource.RLIMIT_MSGQUEUE: (0, 0),
            resource.RLIMIT_CPU: (lim["cpu_max"], lim["cpu_max"] + 1),
            resource.RLIMIT_AS: (as_max, as_max),
        }
    )
    layers.process_state_set(CHILD_STATE)

    if uid not in cfg["uids"]:
        raise layers.LayerError(f"uid {uid} is not one of this slot's")
    layers.drop_uid(uid, uid)
    layers.prctl(layers.PR_SET_NO_NEW_PRIVS, 1)
    if layers.prctl(layers.PR_GET_NO_NEW_PRIVS) != 1:
        raise layers.LayerError("no_new_privs did not stick")
    if ruleset:
        layers.landlock_restrict(p.CHILD_RULESET_FD)
        os.close(p.CHILD_RULESET_FD)
    if SECCOMP is not None:
        layers.load_seccomp_program(SECCOMP, os.getpid())
    else:
        layers.load_seccomp(os.getpid())
    if layers.proc_status().get("Seccomp") != "2":
        raise layers.LayerError("seccomp filter is not active")


# ----------------------------------------------------------------------------------------------
# Child: run the student's module on the calls.


@functools.cache
def libc_mmap() -> Any:
    """libc's mmap with its prototype, made once in the zygote (each child inherits it). The
    area is mapped through libc, not the mmap module: that one keeps a duplicate descriptor
    open, and a child keeps only the descriptors it needs."""
    import ctypes

    fn = ctypes.CDLL(None, use_errno=True).mmap
    fn.restype = ctypes.c_void_p
    fn.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    return fn


class ResultArea:
    """The shared result area (see protocol.py): frames appended, then the length committed."""

    def __init__(self, fd: int, size: int) -> None:
        import ctypes

        addr = libc_mmap()(None, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise layers.LayerError(f"cannot map the result area: {ctypes.get_errno()}")
        # Written through a memoryview of the mapping: a slice assignment is the same memcpy
        # as ctypes.memmove, without three foreign calls and their conversions per frame.
        self.view = memoryview((ctypes.c_char * size).from_address(addr)).cast("B")
        self.size = size
        self.pos = p.AREA_HEADER.size

    def add(self, kind: bytes, payload: bytes) -> bool:
        start = self.pos + p.HEADER.size
        end = start + len(payload)
        if end > self.size:
            return False
        p.HEADER.pack_into(self.view, self.pos, kind, len(payload))
        self.view[start:end] = payload
        self.pos = end
        # The frame is whole before its end is committed: the parent reads up to this only.
        p.AREA_HEADER.pack_into(self.view, 0, end)
        return True


AREA: ResultArea | None = None


class AreaFull(Exception):
    pass


def emit(kind: bytes, payload: bytes = b"") -> None:
    if kind in p.AREA_KINDS:
        assert AREA is not None
        if not AREA.add(kind, payload):
            raise AreaFull
    else:
        p.write_all(p.CHILD_RESULT_FD, p.frame(kind, payload))


def emit_json(kind: bytes, obj: Any) -> None:
    emit(kind, json.dumps(obj).encode())


def flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # the student may have replaced or closed it
            stream.flush()


def student_traceback(exc: BaseException, limit_chars: int) -> str:
    """The traceback restricted to the student's own frames: no sandbox paths or internals."""
    try:
        te = traceback.TracebackException.from_exception(exc, limit=-TRACEBACK_FRAMES)
        stack: list[traceback.TracebackException] = []
        seen = set()
        node: traceback.TracebackException | None = te
        while node is not None and id(node) not in seen:
            seen.add(id(node))
            stack.append(node)
            node = node.__cause__ or node.__context__
        for node in stack:
            frames = [f for f in node.stack if f.filename == STUDENT_FILENAME]
            node.stack = traceback.StackSummary.from_list(frames)
        text = "".join(te.format())
    except Exception:
        text = f"{type(exc).__name__}\n"
    if len(text) > limit_chars:
        text = "...\n" + text[-limit_chars:]
    return text


def encode_array(value: Any, max_bytes: int) -> bytes | dict[str, Any]:
    import numpy as np

    arr = np.asarray(value).view(np.ndarray)
    if arr.dtype.kind not in "biuf" or arr.dtype.itemsize > 8:
        return {"code": "not-numeric", "type": type(value).__name__, "dtype": str(arr.dtype)}
    if arr.nbytes > max_bytes:
        return {"code": "too-large", "nbytes": int(arr.nbytes)}
    # tobytes() is C order whatever the layout; the header is written here (np.save formats it
    # in Python, three times slower): the same .npy 1.0 format, 64-byte aligned.
    return p.npy_bytes(arr.dtype.str, tuple(int(n) for n in arr.shape), arr.tobytes())


def read_part(
    cfg: dict[str, Any], *, first: bool
) -> tuple[dict[str, Any], memoryview | None, list[memoryview]]:
    """One part of the request: header, the code (first part only) and the input arrays."""
    frames = p.split_frames(p.read_request(p.CHILD_REQUEST_FD, cfg["max_request_bytes"]))
    kinds = [kind for kind, _ in frames]
    head = [p.REQ_HEADER, p.REQ_CODE] if first else [p.REQ_HEADER]
    if kinds[: len(head)] != head or set(kinds[len(head) :]) - {p.REQ_ARRAY}:
        raise ValueError("malformed request")
    header = json.loads(bytes(frames[0][1]))
    blobs = [blob for _, blob in frames[len(head) :]]
    if len(blobs) != header["n_arrays"]:
        raise ValueError("array count")
    return header, frames[1][1] if first else None, blobs


def handle_request(cfg: dict[str, Any]) -> int:
    import resource

    import numpy as np

    try:
        header, code_bytes, blobs = read_part(cfg, first=True)
        # Every limit, the niceness, policy, affinity and I/O priority set again from trusted
        # values, whatever happened since the fork; this request's CPU and memory limits
        # lower than the ones set then.
        assert CHILD_STATE is not None
        cpu = int(header["cpu_seconds"])
        as_limit = layers.vm_size_bytes() + int(header["memory_mb"]) * 2**20
        layers.process_state_set(
            CHILD_STATE.with_rlimits(
                {
                    resource.RLIMIT_CPU: (cpu, cpu + 1),
                    resource.RLIMIT_AS: (as_limit, as_limit),
                }
            )
        )
    except Exception as e:  # none of the student's code has run: the sandbox's own failure
        with contextlib.suppress(OSError):
            p.write_all(
                p.CHILD_RESULT_FD, p.frame(p.LAYER_FAILED, f"{type(e).__name__}: {e}".encode())
            )
        return p.EXIT_LAYER_FAILED
    emit(p.BEGIN)
    gated = bool(header.get("gate"))
    if not gated:
        os.close(p.CHILD_REQUEST_FD)

    max_chars = cfg["max_error_chars"]
    max_out = cfg["max_array_bytes"]
    try:
        source = bytes(code_bytes).decode("utf-8", "replace")
        linecache.cache[STUDENT_FILENAME] = (
            len(source),
            None,
            source.splitlines(True),
            STUDENT_FILENAME,
        )
        try:
            code = compile(source, STUDENT_FILENAME, "exec", dont_inherit=True)
        except SyntaxError as e:
            emit_json(p.SYNTAX, {"line": e.lineno, "msg": str(e.msg)})
            return 0
        except (ValueError, RecursionError, MemoryError, OverflowError) as e:
            emit_json(p.SYNTAX, {"line": None, "msg": f"{type(e).__name__}: {e}"})
            return 0

        module = types.ModuleType("submission")
        module.__file__ = STUDENT_FILENAME
        sys.modules["submission"] = module
        try:
            exec(code, module.__dict__)  # noqa: S102  (inside the sandbox: that is the point)
            restore_builtins()
        except MemoryError:
            flush_std()
            emit(p.MEMORY)
            return 0
        except SystemExit:
            raise
        except BaseException as e:
            restore_builtins()
            flush_std()
            emit(p.IMPORT, student_traceback(e, max_chars).encode())
            return 0
        fn = module.__dict__.get(header["entry_point"])
        if not callable(fn):
            flush_std()
            emit(p.MISSING)
            return 0
        emit(p.LOADED)

        def run_calls(calls: list[dict[str, Any]], blobs: list[memoryview]) -> bool:
            """Every call, each answered in the area; False if a MemoryError ended the run."""

            def arg(spec: dict[str, Any]) -> Any:
                if "a" in spec:
                    flat = np.frombuffer(blobs[spec["a"]], dtype=np.dtype(spec["dtype"]))
                    return flat.reshape(spec["shape"]).copy()  # a fresh, writable array per call
                return spec["v"]

            for call in calls:
                args = [arg(s) for s in call["args"]]
                kwargs = {k: arg(s) for k, s in call["kwargs"].items()}
                try:
                    result = fn(*args, **kwargs)
                    restore_builtins()
                    encoded = encode_array(result, max_out)
                except MemoryError:
                    flush_std()
                    emit(p.MEMORY)
                    return False
                except SystemExit:
                    raise
                except BaseException as e:
                    restore_builtins()
                    emit_json(
                        p.CALL_ERROR,
                        {"code": "exception", "traceback": student_traceback(e, max_chars)},
                    )
                    continue
                if isinstance(encoded, dict):
                    emit_json(p.CALL_ERROR, encoded)
                    continue
                emit(p.OUTPUT, encoded)
                if call["return_inputs"]:
                    for a in [*args, *kwargs.values()]:
                        if isinstance(a, np.ndarray):
                            after = encode_array(a, max_out)
                            emit(p.INPUT_AFTER, after if isinstance(after, bytes) else b"")
            return True

        if not run_calls(header["calls"], blobs):
            return 0
        if gated:
            # The second phase comes only if the parent wants it, after judging what
            # the area holds: a second part of the request, or the pipe closed (the end).
            flush_std()
            emit(p.PAUSE)
            try:
                more, _, more_blobs = read_part(cfg, first=False)
                os.close(p.CHILD_REQUEST_FD)
            except (OSError, EOFError, ValueError):  # closed: or the student's code meddled
                return 0
            except MemoryError:  # the student's memory left no room to read the rest
                emit(p.MEMORY)
                return 0
            if not run_calls(more["calls"], more_blobs):
                return 0
        flush_std()
        emit(p.DONE)
        return 0
    except AreaFull:
        flush_std()
        emit(p.OVERFLOW)
        return 0
    except SystemExit as e:
        flush_std()
        return e.code if isinstance(e.code, int) and 0 <= e.code < 256 else 1


if __name__ == "__main__":
    zygote_main()
