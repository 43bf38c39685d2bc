"""The isolation layers a child applies to itself before any student code runs.

Bind-mounted into the sandbox; standard library plus pyseccomp only. Every function raises
LayerError when its layer cannot be applied *and verified*: the caller then refuses to run
anything (fail closed).
"""

from __future__ import annotations

import _signal
import ctypes
import errno
import os
import resource
import struct
from dataclasses import dataclass


class LayerError(RuntimeError):
    """A layer could not be applied: nothing may run."""


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int
_libc.prctl.argtypes = [
    ctypes.c_int,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
]

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39

CAP_KILL = 5
CAP_SETGID = 6
CAP_SETUID = 7
# The only capabilities the zygote keeps (bubblewrap --cap-add): drop uid/gid, kill children.
ZYGOTE_CAPS = (1 << CAP_KILL) | (1 << CAP_SETGID) | (1 << CAP_SETUID)


def prctl(option: int, arg2: int = 0) -> int:
    res = _libc.prctl(option, arg2, 0, 0, 0)
    if res < 0:
        err = ctypes.get_errno()
        raise LayerError(f"prctl({option}) failed: {os.strerror(err)}")
    return res


def _proc_read(path: str) -> bytes:
    """A small /proc file of our own, read with two syscalls. A text-mode ``open`` builds an
    io stack (file, buffer, decoder) whose code and objects a fresh child then writes to:
    each page of them one more copy-on-write fault (bench/children.py)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def proc_status() -> dict[str, str]:
    out = {}
    for line in _proc_read("/proc/self/status").decode("ascii", "replace").splitlines():
        key, _, value = line.partition(":")
        out[key] = value.strip()
    return out


def capabilities() -> dict[str, int]:
    status = proc_status()
    return {k: int(status[k], 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}


# ----------------------------------------------------------------------------------------------
# Landlock, through raw syscalls: the PyPI package covers only the filesystem, and network
# (ABI 4) and scoping (ABI 6) are what keep a child off Redis and away from other processes.

SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock is missing or disabled."""
    res = _libc.syscall(
        SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), LANDLOCK_CREATE_RULESET_VERSION
    )
    return max(int(res), 0)


@dataclass(frozen=True)
class Ruleset:
    fd: int
    abi: int
    # What this kernel let us restrict, for the startup log.
    net: bool
    scoped: bool


def build_ruleset(abi: int) -> Ruleset:
    """A read-only view of the whole (already minimal) filesystem, no TCP, scoped signals.

    Built once in the zygote while it is still root (the rule needs an open descriptor of /),
    and applied by each child with restrict_self.
    """
    if abi < 1:
        raise LayerError("Landlock is not available in this kernel")
    fs = (1 << 13) - 1
    if abi >= 2:
        fs |= FS_REFER
    if abi >= 3:
        fs |= FS_TRUNCATE
    if abi >= 5:
        fs |= FS_IOCTL_DEV
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    if abi >= 6:
        attr = struct.pack("<QQQ", fs, net, scoped)
    elif abi >= 4:
        attr = struct.pack("<QQ", fs, net)
    else:
        attr = struct.pack("<Q", fs)
    buf = ctypes.create_string_buffer(attr, len(attr))
    fd = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), 0)
    if fd < 0:
        raise LayerError(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    root = os.open("/", os.O_PATH | os.O_CLOEXEC)
    try:
        # Read files and list directories anywhere in the sandbox's view; nothing else
        # (no write, no execute, no device ioctl).
        rule = struct.pack("<Qi", FS_READ_FILE | FS_READ_DIR, root)
        rbuf = ctypes.create_string_buffer(rule, len(rule))
        res = _libc.syscall(SYS_LANDLOCK_ADD_RULE, fd, LANDLOCK_RULE_PATH_BENEATH, rbuf, 0)
        if res < 0:
            raise LayerError(f"landlock_add_rule: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(root)
    return Ruleset(fd=fd, abi=abi, net=bool(net), scoped=bool(scoped))


def landlock_restrict(ruleset_fd: int) -> None:
    if _libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset_fd, 0) < 0:
        raise LayerError(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")


# ----------------------------------------------------------------------------------------------
# seccomp: a deny list on top of everything else. Errors rather than kills, so student code
# sees an ordinary PermissionError and the verdict stays readable.

DENIED_SYSCALLS = (
    # No network, no IPC with the outside.
    "socket",
    "socketpair",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    # No new programs, no new processes (threads stay allowed, see clone below).
    "execve",
    "execveat",
    "fork",
    "vfork",
    # No looking into or controlling other processes.
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_open",
    "pidfd_getfd",
    "pidfd_send_signal",
    "kcmp",
    # No changing the filesystem view or namespaces.
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "open_by_handle_at",
    "name_to_handle_at",
    "fanotify_init",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    # Kernel attack surface a numpy function never needs.
    "bpf",
    "perf_event_open",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "userfaultfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "syslog",
    "personality",
    "modify_ldt",
    "iopl",
    "ioperm",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "mknod",
    "mknodat",
    "vhangup",
    "lookup_dcookie",
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setgroups",
    "setfsuid",
    "setfsgid",
    "capset",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "tkill",
    "process_madvise",
    "process_mrelease",
    # No System V or POSIX IPC objects and no memfd: they can outlive the run (a segment stays
    # in the zygote's IPC namespace after its creator exits), be found by a later run under a
    # known key, and pin memory outside the address-space limit.
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    "memfd_create",
    "memfd_secret",
)

# Allowed on the calling process only (its pid argument 0): the kernel also lets a process change
# these for any other process of its uid, such as the zygote's next child.
SELF_ONLY_SYSCALLS = (
    "prlimit64",
    "sched_setaffinity",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setattr",
    "migrate_pages",
    "move_pages",
)
PRIO_PROCESS = 0
IOPRIO_WHO_PROCESS = 1

CLONE_THREAD = 0x00010000


def _seccomp_filter(my_pid: int) -> object:
    import pyseccomp as sc

    f = sc.SyscallFilter(sc.ALLOW)
    eperm = sc.ERRNO(errno.EPERM)
    for name in DENIED_SYSCALLS:
        f.add_rule(eperm, name)
    # glibc tries clone3 first; ENOSYS makes it fall back to clone, which we can filter by
    # flags (clone3 passes them in memory). EPERM here left OpenBLAS spinning.
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    # clone only for threads: a new process needs CLONE_THREAD unset.
    f.add_rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
    # Signals only to itself (by pid or, for raise(), tgkill with its own tgid).
    f.add_rule(eperm, "kill", sc.Arg(0, sc.NE, my_pid))
    f.add_rule(eperm, "tgkill", sc.Arg(0, sc.NE, my_pid))
    # Limits, priority, CPU placement and I/O priority: its own only ("who" 0 of a process;
    # the group and user forms reach every process of the uid).
    for name in SELF_ONLY_SYSCALLS:
        f.add_rule(eperm, name, sc.Arg(0, sc.NE, 0))
    f.add_rule(eperm, "setpriority", sc.Arg(0, sc.NE, PRIO_PROCESS))
    f.add_rule(eperm, "setpriority", sc.Arg(1, sc.NE, 0))
    f.add_rule(eperm, "ioprio_set", sc.Arg(0, sc.NE, IOPRIO_WHO_PROCESS))
    f.add_rule(eperm, "ioprio_set", sc.Arg(1, sc.NE, 0))
    return f


def load_seccomp(my_pid: int) -> None:
    """Build the filter with libseccomp and load it (costly in a fresh child, so the zygote
    normally compiles it once and each child only writes its pid in)."""
    _seccomp_filter(my_pid).load()  # type: ignore[attr-defined]


# The same filter compiled once, in the zygote, with this in place of the child's pid: above
# any pid_max (at most 2**22) and unlike every syscall number, flag and architecture token in
# the filter. A child writes its pid into exactly those instructions and loads the program
# with one prctl, as libseccomp's seccomp_load does (no_new_privs is set before).
PID_PLACEHOLDER = 0x3FFF_FFF7
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
_BPF_INSN = struct.Struct("<HBBI")  # struct sock_filter: code, jt, jf, k


@dataclass(frozen=True)
class SeccompProgram:
    bpf: bytes
    pid_offsets: tuple[int, ...]  # byte offsets of the instructions comparing with the pid


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def seccomp_program() -> SeccompProgram:
    """The filter as BPF, exported by libseccomp from the very rules ``load_seccomp`` loads."""
    import tempfile

    with tempfile.TemporaryFile() as out:
        _seccomp_filter(PID_PLACEHOLDER).export_bpf(out)  # type: ignore[attr-defined]
        out.seek(0)
        bpf = out.read()
    if not bpf or len(bpf) % _BPF_INSN.size:
        raise LayerError("libseccomp exported a malformed filter")
    offsets = tuple(
        off
        for off in range(0, len(bpf), _BPF_INSN.size)
        if _BPF_INSN.unpack_from(bpf, off)[3] == PID_PLACEHOLDER
    )
    if not offsets:
        raise LayerError("the exported filter does not compare with the pid")
    return SeccompProgram(bpf, offsets)


def seccomp_bpf_for(program: SeccompProgram, pid: int) -> bytearray:
    """The program with ``pid`` written in: what libseccomp builds for that pid."""
    insns = bytearray(program.bpf)
    for off in program.pid_offsets:
        code, jt, jf, _ = _BPF_INSN.unpack_from(insns, off)
        _BPF_INSN.pack_into(insns, off, code, jt, jf, pid)
    return insns


def load_seccomp_program(program: SeccompProgram, my_pid: int) -> None:
    insns = seccomp_bpf_for(program, my_pid)
    buf = (ctypes.c_char * len(insns)).from_buffer(insns)
    fprog = _SockFprog(len(insns) // _BPF_INSN.size, ctypes.addressof(buf))
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) < 0:
        raise LayerError(f"seccomp filter: {os.strerror(ctypes.get_errno())}")


# ----------------------------------------------------------------------------------------------
# Limits, priority and placement; the uid drop.


# ioprio has no Python API: the raw syscalls (set, get), by architecture.
_IOPRIO_SYSCALLS = {"x86_64": (251, 252), "aarch64": (30, 31)}
RLIMITS = tuple(
    sorted(
        {
            getattr(resource, name)
            for name in dir(resource)
            if name.startswith("RLIMIT_") and isinstance(getattr(resource, name), int)
        }
    )
)


@dataclass(frozen=True)
class ProcessState:
    """What a process's scheduling and resources are: every rlimit, niceness, scheduling
    policy, CPU affinity and I/O priority."""

    rlimits: tuple[tuple[int, int, int], ...]  # (resource, soft, hard), every RLIMIT_*
    niceness: int
    policy: int
    affinity: frozenset[int]
    ioprio: int

    def with_rlimits(self, wanted: dict[int, tuple[int, int]]) -> ProcessState:
        """The same state with some rlimits replaced ({resource.RLIMIT_CPU: (soft, hard)})."""
        return ProcessState(
            rlimits=tuple((r, *wanted.get(r, (soft, hard))) for r, soft, hard in self.rlimits),
            niceness=self.niceness,
            policy=self.policy,
            affinity=self.affinity,
            ioprio=self.ioprio,
        )


def _ioprio_syscalls() -> tuple[int, int]:
    try:
        return _IOPRIO_SYSCALLS[os.uname().machine]
    except KeyError:
        raise LayerError(f"no ioprio syscalls known for {os.uname().machine}") from None


def process_state() -> ProcessState:
    """The calling process's own state."""
    ioprio = _libc.syscall(_ioprio_syscalls()[1], IOPRIO_WHO_PROCESS, 0)
    if ioprio < 0:
        raise LayerError(f"ioprio_get: {os.strerror(ctypes.get_errno())}")
    return ProcessState(
        rlimits=tuple((r, *resource.getrlimit(r)) for r in RLIMITS),
        niceness=os.getpriority(os.PRIO_PROCESS, 0),
        policy=os.sched_getscheduler(0),
        affinity=frozenset(os.sched_getaffinity(0)),
        ioprio=ioprio,
    )


def process_state_set(state: ProcessState) -> None:
    """Make the calling process's state exactly ``state``, whatever it was, and verify it.

    Right before student code runs, from values the zygote read of itself (no child can change
    the zygote): a change made meanwhile by anyone else is undone, or, where undoing it needs
    a privilege the child lacks (a raised hard limit, a lower niceness), this raises LayerError
    and the run is the sandbox's failure, not the student's.
    """
    try:
        for which, soft, hard in state.rlimits:
            resource.setrlimit(which, (soft, hard))
        os.setpriority(os.PRIO_PROCESS, 0, state.niceness)
        os.sched_setscheduler(0, state.policy, os.sched_param(0))
        os.sched_setaffinity(0, state.affinity)
    except (OSError, ValueError) as e:
        raise LayerError(f"cannot restore the process state: {e}") from e
    if _libc.syscall(_ioprio_syscalls()[0], IOPRIO_WHO_PROCESS, 0, state.ioprio) < 0:
        raise LayerError(f"ioprio_set: {os.strerror(ctypes.get_errno())}")
    now = process_state()
    if now != state:
        raise LayerError(f"the process state did not stick: {now} != {state}")


def vm_size_bytes() -> int:
    return int(_proc_read("/proc/self/statm").split()[0]) * os.sysconf("SC_PAGE_SIZE")


def drop_uid(uid: int, gid: int) -> None:
    if uid <= 0 or gid <= 0:
        raise LayerError("refusing to run student code as root")
    try:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    except OSError as e:
        raise LayerError(f"uid drop: {e}") from e
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise LayerError("uid drop did not stick")
    if os.getgroups():
        raise LayerError("supplementary groups remain")
    caps = capabilities()
    if caps["CapEff"] or caps["CapPrm"] or caps["CapAmb"]:
        raise LayerError(f"capabilities remain after the uid drop: {caps}")


def reset_signals() -> None:
    # SIGPIPE stays ignored (Python's default) so a closed pipe is an exception, not a kill.
    # Through _signal, the C module: signal's wrappers turn every number into an enum member
    # and back, and a fresh child pays a page fault for each page of that machinery it touches.
    for sig in (_signal.SIGCHLD, _signal.SIGTERM, _signal.SIGINT, _signal.SIGXCPU):
        _signal.signal(sig, _signal.SIG_DFL)
    _signal.pthread_sigmask(_signal.SIG_SETMASK, ())
