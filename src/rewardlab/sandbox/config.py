"""Limits and sandbox settings, and the bubblewrap command line they turn into."""

from __future__ import annotations

import glob
import os
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from rewardlab.core.choices import check_choice
from rewardlab.core.numbers import refuse_nan
from rewardlab.errors import ConfigError

_MIB = 1 << 20

# System directories every interpreter and toolchain needs, bound read-only. Nothing else of
# the host is visible: not /home, /root, /work, /etc (only the files below), /sys or /run.
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin")
# The JDK's configuration lives in /etc (its conf/ files are symlinks there); it holds no secrets
# (Debian ships no jmxremote.password) and the JVM does not start without java.security.
ETC_FILES = ("/etc/ld.so.cache", "/etc/alternatives", "/etc/localtime", "/etc/mime.types",
             *sorted(glob.glob("/etc/java-*-openjdk")))  # fmt: skip
HOST_GRACE_SECONDS = 3.0  # the host waits this long past a job's wall limit, then kills the worker
SANDBOX_UID = 65534  # "nobody", inside the sandbox and, when we start as root, on the host too
WORKER_TMP_BYTES = 1 << 20  # the worker's own /tmp (jobs mount theirs over it)


@dataclass(frozen=True)
class Limits:
    """Resource limits of one job (one program run, or one session of calls).

    CPU time is the verdict limit: it does not change with machine load. The wall limit only
    catches programs that wait (sleep, blocked reads); keep it generous.
    """

    cpu_seconds: float = 5.0  # RLIMIT_CPU per process: SIGXCPU at the limit, SIGKILL 1 s later
    wall_seconds: float = 20.0  # the job is killed after this; a sleeper is not a CPU burner
    memory_bytes: int = 1024 * _MIB  # RLIMIT_DATA per process (and RLIMIT_AS unless set below)
    processes: int = 32  # RLIMIT_NPROC, counted per job (each job has its own user namespace)
    open_files: int = 64  # RLIMIT_NOFILE
    file_size_bytes: int = 16 * _MIB  # RLIMIT_FSIZE: the largest file a job may write
    tmp_bytes: int = 64 * _MIB  # size of the job's private /tmp (tmpfs): disk fills stop here
    # Files (and directories) the job's /tmp may hold: each costs ~1 KiB of kernel memory that
    # no other limit counts, so 8192 bound it to ~8 MiB per job.
    tmp_inodes: int = 8192
    output_bytes: int = 8 * _MIB  # stdout + stderr kept; past it the job is killed (DOMjudge's and problemtools' default)
    frame_bytes: int = 16 * _MIB  # largest answer (encoded value) a call may return
    # RLIMIT_AS per process when set, else `memory_bytes`. Runtimes that reserve address space
    # they never write (the JVM's heap and class space, V8's cages, Go's arenas) need a looser
    # ceiling; RLIMIT_DATA (`memory_bytes`) still bounds what they may write.
    address_space_bytes: int | None = None
    # RLIMIT_STACK when set, else the host's (8 MiB as a rule). Judges limit the stack of native
    # programs only by their memory (Codeforces, Kattis): deep recursion needs more than 8 MiB.
    # Stack pages count toward RLIMIT_AS, not RLIMIT_DATA.
    stack_bytes: int | None = None

    def __post_init__(self) -> None:
        refuse_nan(self)
        for name, value in asdict(self).items():
            if value is None and name in ("address_space_bytes", "stack_bytes"):
                continue
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"Limits.{name} must be a positive number, got {value!r}")
        if self.wall_seconds < self.cpu_seconds:
            raise ConfigError(f"Limits.wall_seconds ({self.wall_seconds}) must be >= cpu_seconds ({self.cpu_seconds})")
        if self.address_space_bytes is not None and self.address_space_bytes < self.memory_bytes:
            raise ConfigError(f"Limits.address_space_bytes ({self.address_space_bytes}) must be >= memory_bytes ({self.memory_bytes})")

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)


Isolation = Literal["auto", "bubblewrap", "rlimits"]


@dataclass(frozen=True)
class SandboxConfig:
    """How sandboxed workers are started.

    Attributes:
        isolation: "bubblewrap" (required), "rlimits" (no namespaces: NOT a security boundary),
            or "auto": bubblewrap when `bwrap` is on PATH, else rlimits with a loud warning.
        python: interpreter run inside; default `/usr/bin/python3` when present (readable by an
            unprivileged uid), else this process's base interpreter.
        extra_ro_binds: more host paths to show read-only (toolchains outside /usr).
        limits: default per-job limits.
        start_timeout: seconds a worker may take to say hello before start-up counts as failed.
    """

    isolation: Isolation = "auto"
    python: str | None = None
    extra_ro_binds: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    start_timeout: float = 20.0

    def __post_init__(self) -> None:
        refuse_nan(self)
        check_choice("isolation", self.isolation, Isolation)

    def interpreter(self) -> str:
        if self.python:
            return self.python
        if os.access("/usr/bin/python3", os.X_OK):
            return "/usr/bin/python3"
        return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


#: Host paths under these mount points would be hidden by the sandbox's own /tmp, /dev and
#: /proc; they are bound under HOST_ALIAS instead (a virtualenv in /tmp, as a CI checkout may have).
HOST_ALIAS = "/run/rewardlab-host"
_SHADOWED = ("/tmp", "/dev", "/proc")


def sandbox_path(path: str) -> str:
    """Where the host `path` is visible inside a bubblewrap sandbox (see HOST_ALIAS)."""
    p = os.path.abspath(path)
    if any(p == top or p.startswith(top + "/") for top in _SHADOWED):
        return HOST_ALIAS + p
    return p


def find_bwrap() -> str | None:
    """Path of the bubblewrap binary, or None."""
    return shutil.which("bwrap")


def _world_reachable(path: str) -> bool:
    """Whether an unprivileged uid can reach `path` (every parent directory is o+x)."""
    p = Path(path).resolve()
    for parent in [*reversed(p.parents), p]:
        try:
            mode = parent.stat().st_mode
        except OSError:
            return False
        if parent != p and not mode & 0o001:
            return False
    return bool(p.stat().st_mode & 0o005)


def site_packages_reachable(path: str) -> bool:
    """Whether the sandbox user (`nobody`) can read a host directory that is bound into it."""
    return os.geteuid() != 0 or _world_reachable(path)


def unreachable_binds(python: str, extra_ro_binds: tuple[str, ...] = ()) -> list[str]:
    """Host paths the sandbox needs that `nobody` cannot reach (a parent directory without o+x,
    e.g. a virtualenv under /root): bubblewrap, started as `nobody`, cannot bind them."""
    prefix = str(Path(python).resolve().parent.parent)
    needed = [python, *([] if prefix.startswith("/usr") else [prefix]), *extra_ro_binds]
    return [path for path in needed if not _world_reachable(path)]


def host_user() -> int | None:
    """The host uid to start bubblewrap as: `nobody` when we are root, None (ourselves) otherwise.

    Started as root, bubblewrap's user namespace would belong to root, and bubblewrap then covers
    /proc/irq and /proc/bus with read-only binds; with those locked mounts the kernel refuses the
    private /proc each job mounts (EPERM, see `mnt_already_visible` in fs/namespace.c). So as
    root we always start as `nobody`; `unreachable_binds` says what it could not bind.
    """
    return SANDBOX_UID if os.geteuid() == 0 else None


def bwrap_argv(bwrap: str, python: str, extra_ro_binds: tuple[str, ...] = ()) -> list[str]:
    """The bubblewrap command line around `python`.

    New user, pid, network, IPC, UTS and cgroup namespaces (`--unshare-all`), uid/gid 65534,
    every capability dropped (`--cap-drop ALL`: as root, bwrap would otherwise leave them, and
    `mount -o remount,rw` would make the read-only binds writable), a read-only system, a
    private tmpfs /tmp, a clean environment, a new session (no terminal injection) and death
    with the parent process.
    """
    argv = [
        bwrap, "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
        "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--hostname", "sandbox",
        "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp",
        "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONHASHSEED", "0",
        "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
    ]  # fmt: skip
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for path in ETC_FILES:
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    prefix = str(Path(python).resolve().parent.parent)
    binds = [prefix] if not prefix.startswith("/usr") else []
    for path in (*binds, *extra_ro_binds):
        argv += ["--ro-bind", path, sandbox_path(path)]
    # The worker's own /tmp is covered by each job's; capped anyway, so nothing there can hold
    # memory outside the limits (tmpfs pages are not counted by RLIMIT_AS).
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(WORKER_TMP_BYTES), "--tmpfs", "/tmp", "--chdir", "/tmp"]
    # bwrap builds the new root (and /dev) on tmpfs: writable unless remounted. Read-only, no
    # job can leave files behind for the next one or fill memory through them.
    argv += ["--remount-ro", "/dev", "--remount-ro", "/"]
    return argv


def python_argv(python: str, source: str, *, isolate: bool, calls: tuple[int, int]) -> list[str]:
    """Interpreter command that runs the fork server (`-S -s`: no site-packages of the host);
    `calls` are the inherited read/write descriptors of the call channel."""
    return [python, "-S", "-s", "-B", "-c", source, "--calls", f"{calls[0]},{calls[1]}"] + (["--isolate"] if isolate else [])


def clean_env() -> dict[str, str]:
    """The environment of rlimits-only workers: nothing of the host's secrets."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
