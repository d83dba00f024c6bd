"""Compile a program once, in the sandbox, and keep what it built (keyed by source hash).

The compiler runs as an ordinary sandbox job (same namespaces, seccomp filter, read-only
system, capped tmpfs, no network, no host files) under `compile_limits()`. What it built
leaves the job as base64 of a tar archive on stdout (see `Language.compile_script`) and is
unpacked HERE, in memory, as untrusted data: regular files with plain names only, bounded in
number and size. Test runs get those bytes written into their own /tmp.

The cache holds builds by sha256 of (language, toolchain identity, budget, source): in this
process (`BuildCache`, LRU), and optionally in a directory shared across processes and runs
(`cache_dir`). A compile error is cached too (the same source fails the same way); a compile
that hit a limit is not: one stopped by the sandbox, one whose compiler ran out of memory (it
exits with a message rather than being killed), one that built more than a test run can take.

An entry of `cache_dir` carries an HMAC-SHA256 of its key and content under a secret of that
directory (`.rewardlab-build-key`, mode 0600, made by the first process that uses it). The
host recomputes it on every load, so an entry that was damaged, copied to another key, or
planted by someone who cannot read the secret is rebuilt instead of served. The directory's
owner and anyone who can read the secret are trusted.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import io
import json
import logging
import os
import secrets
import stat
import tarfile
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from rewardlab.errors import BuildTooLarge, ConfigError
from rewardlab.sandbox import Limits, Outcome, SandboxPool
from rewardlab.sandbox.pool import job_files_limit
from rewardlab.verify.code.languages import Language, compile_limits, run_env

log = logging.getLogger(__name__)
MAX_ARTIFACTS = 256  # files one build may produce (Java: a class file per class)
#: all of them together: the most a test run can be handed (its files travel in one frame)
MAX_ARTIFACT_BYTES = job_files_limit(Limits(tmp_bytes=1 << 40))
#: what compilers print when they run out of memory and exit (rather than being killed):
#: gcc/g++ (cc1), the C++ runtime and Rust's allocator, the JVM, V8 (tsc), Go's runtime
COMPILER_OOM = ("out of memory allocating", "virtual memory exhausted", "Cannot allocate memory", "std::bad_alloc",
                "memory allocation of", "java.lang.OutOfMemoryError", "heap out of memory", "runtime: out of memory",
                "Killed signal terminated program")  # fmt: skip
_SECRET = ".rewardlab-build-key"


@dataclass(frozen=True)
class Build:
    """What compiling one source gave: artifacts (file name -> bytes), or why not.

    `status` is "ok", "compile_error" (the compiler refused it: the program's fault),
    "compile_limit" (the compiler ran out of time or memory, or built more than a build may
    hold: the program's fault too) or "unreadable" (what the compile job sent back could not be
    read: our side, so the reward reports a `sandbox` error, and it is never cached).
    """

    status: str
    artifacts: dict[str, bytes] = field(default_factory=dict)
    message: str = ""  # the compiler's messages (its stderr, last part)
    cpu_seconds: float | None = None
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_info(self) -> dict[str, object]:
        return {"status": self.status, "message": self.message[-2000:], "cpu_seconds": self.cpu_seconds, "cached": self.cached}


def build_key(lang: Language, source: str, memory_mb: int, headers: Mapping[str, str] | None = None) -> str:
    """The cache key of one build (module doc); `headers` (e.g. testlib.h) are part of it."""
    digest = hashlib.sha256()
    command = lang.compile_command(source) if lang.compile else ""
    for part in (lang.name, lang.toolchain_id(), command, str(memory_mb), source,
                 *(f"{name}\0{text}" for name, text in sorted((headers or {}).items()))):  # fmt: skip
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


class BuildCache:
    """Builds of this process (LRU, `size` entries) over an optional directory of them."""

    def __init__(self, size: int = 512, cache_dir: str | None = None):
        self.size = size
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else None
        self._builds: OrderedDict[str, Build] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}
        self._key: bytes | None = None  # the directory's secret, read once

    def get(self, key: str) -> Build | None:
        with self._lock:
            build = self._builds.get(key)
            if build is not None:
                self._builds.move_to_end(key)
                return replace(build, cached=True)
        build = self._load(key)
        if build is not None:
            self._remember(key, build)
        return build

    def put(self, key: str, build: Build) -> None:
        if build.status not in ("ok", "compile_error"):
            return
        self._remember(key, build)
        self._store(key, build)

    def lock_for(self, key: str) -> threading.Lock:
        """One lock per key: samples of a group with the same source compile once."""
        with self._lock:
            return self._building.setdefault(key, threading.Lock())

    def _remember(self, key: str, build: Build) -> None:
        with self._lock:
            self._builds[key] = build
            self._builds.move_to_end(key)
            while len(self._builds) > self.size:
                self._builds.popitem(last=False)

    def _secret(self) -> bytes:
        """The directory's HMAC secret (module doc): made once, 0600; refused if another user
        owns it or others may read it (then they could sign entries too)."""
        assert self.cache_dir is not None
        if self._key is not None:
            return self._key
        path = self.cache_dir / _SECRET
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        if not os.path.lexists(path):
            fd, fresh = tempfile.mkstemp(dir=self.cache_dir, suffix=".part")  # mode 0600
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(secrets.token_bytes(32))
                os.link(fresh, path)  # atomic and exclusive: a reader never sees it half written
            except FileExistsError:
                pass  # another process made it first
            finally:
                os.unlink(fresh)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)  # a symlink is refused too
        except OSError as exc:
            raise ConfigError(f"cannot read the build cache's secret {path}: {exc.strerror}; remove it to start a fresh cache") from None
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
                raise ConfigError(f"{path} must be a file of this user readable by nobody else (mode 0600); remove it to start a fresh cache")
            self._key = f.read()
        return self._key

    def _digest(self, key: str, files: dict[str, bytes]) -> str:
        mac = hmac.new(self._secret(), key.encode(), hashlib.sha256)
        for name in sorted(files):
            mac.update(b"\0%d\0%s\0" % (len(files[name]), name.encode()))
            mac.update(files[name])
        return mac.hexdigest()

    def _path(self, key: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / key[:2] / f"{key}.tar"

    def _load(self, key: str) -> Build | None:
        path = self._path(key)
        if path is None or not path.exists():
            return None
        try:
            files = unpack_tar(path.read_bytes())
            signature = files.pop("build.sig", b"").decode("ascii")
            if not hmac.compare_digest(signature, self._digest(key, files)):
                log.warning("build cache entry %s does not match its signature: rebuilding it", path)
                return None
            meta = json.loads(files.pop("build.json"))
            artifacts = {name.removeprefix("out/"): data for name, data in files.items()}
            return Build(meta["status"], artifacts, meta.get("message", ""), meta.get("cpu_seconds"), cached=True)
        except ConfigError:  # the directory's secret is unusable: say so, do not rebuild forever
            raise
        except (ValueError, KeyError, OSError):
            return None  # a damaged entry is rebuilt

    def _store(self, key: str, build: Build) -> None:
        path = self._path(key)
        if path is None:
            return
        meta = json.dumps({"status": build.status, "message": build.message, "cpu_seconds": build.cpu_seconds}).encode()
        files = {"build.json": meta, **{f"out/{n}": d for n, d in build.artifacts.items()}}
        files["build.sig"] = self._digest(key, files).encode("ascii")
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for name, data in files.items():
                member = tarfile.TarInfo(name)
                member.size = len(data)
                tar.addfile(member, io.BytesIO(data))
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".part")
        with os.fdopen(fd, "wb") as f:
            f.write(buffer.getvalue())
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old entry or the new one


def unpack_tar(data: bytes) -> dict[str, bytes]:
    """Regular files of an (untrusted) tar archive, by plain name; ValueError on anything else."""
    files: dict[str, bytes] = {}
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for member in tar:
                name = member.name.removeprefix("./")
                if member.isdir() and name in ("", "."):
                    continue
                parts = name.split("/")
                if not member.isfile() or not name or ".." in parts or name.startswith("/") or len(parts) > 2:
                    raise ValueError(f"unexpected entry {member.name!r} in the build")
                total += member.size
                if len(files) >= MAX_ARTIFACTS or total > MAX_ARTIFACT_BYTES:
                    raise BuildTooLarge("the build is too large")
                extracted = tar.extractfile(member)
                files[name] = extracted.read() if extracted else b""
    except tarfile.TarError as exc:
        raise ValueError(f"unreadable build archive: {exc}") from None
    return files


def compile_program(
    pool: SandboxPool, lang: Language, source: str, *, memory_mb: int, cache: BuildCache, headers: Mapping[str, str] | None = None
) -> Build:
    """The build of `source`, from the cache or compiled now in the sandbox. `headers` are more
    files next to the source while it compiles (a checker's testlib.h)."""
    key = build_key(lang, source, memory_mb, headers)
    if (build := cache.get(key)) is not None:
        return build
    with cache.lock_for(key):
        if (build := cache.get(key)) is not None:
            return build
        build = _compile_in_sandbox(pool, lang, source, memory_mb, dict(headers or {}))
        if build.status != "unreadable":  # a failure on our side must not outlive this call
            cache.put(key, build)
        return build


def _compile_in_sandbox(pool: SandboxPool, lang: Language, source: str, memory_mb: int, headers: dict[str, str]) -> Build:
    result = pool.run(
        argv=["/bin/sh", "-c", lang.compile_script(source, memory_mb)], files={**headers, lang.source_name(source): source},
        env=run_env(lang, memory_mb), limits=compile_limits(),
    )  # fmt: skip
    message = result.stderr.strip()
    if result.outcome is Outcome.RUNTIME_ERROR and any(marker in message[-2000:] for marker in COMPILER_OOM):
        return Build("compile_limit", message=f"the compiler ran out of memory\n{message}", cpu_seconds=result.cpu_seconds)
    if result.outcome is Outcome.RUNTIME_ERROR:
        return Build("compile_error", message=message or result.reason(), cpu_seconds=result.cpu_seconds)
    if not result.ok:
        return Build("compile_limit", message=f"the compiler was stopped: {result.reason()}\n{message}", cpu_seconds=result.cpu_seconds)
    try:
        files = unpack_tar(base64.b64decode(result.stdout.strip(), validate=True))
    except BuildTooLarge as exc:
        return Build("compile_limit", message=f"{exc}\n{message}", cpu_seconds=result.cpu_seconds)
    except (ValueError, binascii.Error) as exc:
        return Build("unreadable", message=f"the build could not be read: {exc}\n{message}", cpu_seconds=result.cpu_seconds)
    artifacts = {name: data for name, data in files.items() if "/" not in name}
    if not artifacts:
        return Build("compile_error", message=f"the compiler produced nothing\n{message}", cpu_seconds=result.cpu_seconds)
    return Build("ok", artifacts, message, result.cpu_seconds)
