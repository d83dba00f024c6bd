"""The languages `code.tests` runs: how each is compiled and run inside the sandbox, and limits.

Every toolchain comes from the system (Debian packages, or npm into /usr/local for
TypeScript; `make system-deps` installs them) and is visible to the sandbox through its
read-only /usr. Each is pinned to one version (`Language.version`; docs/code.md "Languages"
says which judge each follows, AtCoder's 2023 language list being the anchor), and
`make system-deps` installs exactly those on every machine. A program is compiled once per distinct source (see `compile.py`) in a job of
its own, and its artifacts (a binary, class files or a jar, JavaScript) are copied into the private
/tmp of every test run.

Memory (see `rewardlab.sandbox.Limits`): `memory_mb` is what the program may write
(RLIMIT_DATA), plus a fixed allowance for the language runtime's own data (the JVM's
metaspace, code cache and GC tables; V8's young generation and code space). The address-space
ceiling (RLIMIT_AS) is that plus what the runtime reserves without writing: the JVM reserves
its heap and class space, V8 its pointer cage, Go its arena index (1.23: over 1.1 GiB).
Without that headroom they do not start under RLIMIT_AS alone. The runtimes are also told the budget, so they fail as
their own out-of-memory error instead of a raw allocation failure: `-Xmx` (Java),
`--max-old-space-size` (node), `GOMEMLIMIT` (Go: a soft limit, the collector works harder
before the hard one is reached).

Time: `cpu_seconds` is the limit of the problem; with `time_scale="hackerearth"` it is
multiplied by the factor of HackerEarth's judge environment (http://hackerearth.com/docs/judge:
C/C++ 1x, Go 2x, Java 2x, Rust 2.5x, JavaScript and TypeScript 5x, Python 5x).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from rewardlab.errors import ConfigError
from rewardlab.sandbox import Limits
from rewardlab.verify.code.java import java_program

_MIB = 1 << 20
#: Where `make system-deps` installs TypeScript and @types/node with npm (under /usr: visible
#: to the sandbox); Debian's node-typescript has no @types/node, so `require` would not check.
TYPESCRIPT_HOME = "/usr/local/lib/rewardlab-ts/node_modules"
_JVM_FLAGS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-Xshare:auto",
              "-XX:CompressedClassSpaceSize=64m", "-XX:ReservedCodeCacheSize=64m",
              "-XX:MaxMetaspaceSize=128m", "-XX:ActiveProcessorCount=1")  # fmt: skip


@dataclass(frozen=True)
class Language:
    """How one language is compiled and run. Commands run in the job's working directory
    (its private /tmp; relative paths, so the rlimits-only fallback keeps them in its own).

    Attributes:
        name: the `language=` value.
        tags: info strings of markdown fences that hold this language.
        source_file: the file the program is written to (Java: its public class decides).
        compile: shell command that builds the artifacts into out/, or None (interpreted
            Python: run from source). `{src}` is the source file, `{mem}` the budget in MiB.
        run: argv of a test run, in the directory that holds the artifacts. `{mem}`: the budget
            in MiB, `{main}`: the Java main class (qualified by its package), `{classpath}`:
            where the JVM finds it.
        compile_packaged: the compile command of a Java source that declares a package (None:
            `compile` for every source). Its classes land in directories (foo/bar/Main.class)
            that the flat /tmp of a test run cannot hold, so they leave as one jar.
        toolchain: the program that must exist on the host for this language.
        package: what installs it (named in errors).
        version: the pinned version of the toolchain ("12.2": any 12.2.x), as `make
            system-deps` installs it and docs/code.md documents it.
        version_command: argv that prints the toolchain's version on the host.
        standard: the language standard `{std}` stands for in `compile` (C and C++), or None.
        standards: the standards a problem or the reward may choose instead (`with_standard`).
        time_factor: HackerEarth's time-limit multiplier (module doc).
        runtime_mb: RLIMIT_DATA allowance of the runtime itself, on top of the budget.
        reserve_mb: address space reserved but not written, on top of that (RLIMIT_AS).
        env: environment of compile and test runs.
        oom_markers: what the runtime prints when the budget is exhausted.
        stack_by_memory: the stack is limited only by the memory budget (RLIMIT_STACK set to
            it), as Codeforces and Kattis run C, C++ and Python; otherwise the host's.
    """

    name: str
    tags: frozenset[str]
    source_file: str
    compile: str | None
    run: tuple[str, ...]
    toolchain: str
    package: str
    time_factor: float
    version: str = ""
    version_command: tuple[str, ...] = ()
    standard: str | None = None
    standards: frozenset[str] = frozenset()
    runtime_mb: int = 0
    reserve_mb: int = 0
    env: Mapping[str, str] = field(default_factory=dict)
    oom_markers: tuple[str, ...] = ()
    compile_packaged: str | None = None
    stack_by_memory: bool = False

    def limits(self, *, cpu_seconds: float, wall_seconds: float, memory_mb: int, base: Limits) -> Limits:
        """Limits of one test run with `memory_mb` for the program (module doc)."""
        data = (memory_mb + self.runtime_mb) * _MIB
        space = data + self.reserve_mb * _MIB if self.reserve_mb else None
        return Limits(
            cpu_seconds=cpu_seconds, wall_seconds=max(wall_seconds, cpu_seconds), memory_bytes=data,
            address_space_bytes=space, processes=base.processes, open_files=base.open_files,
            file_size_bytes=base.file_size_bytes, tmp_bytes=base.tmp_bytes, tmp_inodes=base.tmp_inodes,
            output_bytes=base.output_bytes, stack_bytes=memory_mb * _MIB if self.stack_by_memory else None,
        )  # fmt: skip

    def source_name(self, source: str) -> str:
        """The file name the source must have (javac wants the public class's name)."""
        if self.name == "java":
            return java_program(source).source_name
        return self.source_file

    def run_argv(self, source: str, memory_mb: int) -> list[str]:
        main, classpath = "", "."
        if self.name == "java":
            program = java_program(source)
            main, classpath = program.qualified_main, JAVA_JAR if program.package else "."
        return [part.format(mem=memory_mb, main=main, classpath=classpath) for part in self.run]

    def compile_command(self, source: str) -> str:
        """The compile command template for `source` (`compile`, or `compile_packaged`), with
        the standard filled in (so it is part of every build's cache key)."""
        assert self.compile is not None
        if self.compile_packaged and self.name == "java" and java_program(source).package:
            return self.compile_packaged
        return self.compile.replace("{std}", self.standard or "")

    def with_standard(self, standard: str | None) -> Language:
        """This language compiled as `standard` (None: the default); ConfigError naming the
        standards it takes otherwise."""
        if standard is None or standard == self.standard:
            return self
        if standard not in self.standards:
            takes = ", ".join(sorted(self.standards)) if self.standards else "none (it has no standard option)"
            raise ConfigError(f"{self.name} takes no standard {standard!r}; the standards it takes: {takes}")
        return replace(self, standard=standard)

    def compile_script(self, source: str, memory_mb: int) -> str:
        """The shell script of the compile job: the compiler's stdout goes to stderr (its
        messages), then the artifacts leave as base64 of a tar archive on stdout."""
        build = self.compile_command(source).format(src=shlex.quote(self.source_name(source)), mem=memory_mb)
        return f"mkdir -p out && exec 3>&1 1>&2 && {build} && cd out && tar -cf - . | base64 -w0 >&3"

    def available(self) -> bool:
        return toolchain_path(self.toolchain) is not None

    def toolchain_id(self) -> str:
        """Identifies the installed toolchain (path, size, mtime): part of every cache key, so
        an upgraded compiler never serves binaries of the old one."""
        path = toolchain_path(self.toolchain)
        if path is None:
            return "missing"
        st = os.stat(path)
        return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def installed_version(lang: Language) -> str | None:
    """The version the installed toolchain reports (e.g. "12.2.0"), or None when it is missing
    or prints none. Runs the host's own compiler (`version_command`), not a program."""
    if not lang.version_command or (path := toolchain_path(lang.version_command[0])) is None:
        return None
    try:
        done = subprocess.run([path, *lang.version_command[1:]], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"\d+(?:\.\d+)+", done.stdout + done.stderr)
    return found.group(0) if found else None


def version_matches(installed: str | None, pinned: str) -> bool:
    """`installed` is the pinned version or a release of it ("12.2.0" is "12.2", "1.23.5" is
    not "1.2")."""
    return installed is not None and (installed == pinned or installed.startswith(pinned + "."))


def toolchain_path(program: str) -> str | None:
    """The real path of a toolchain program the sandbox can see (under /usr), or None."""
    found = program if os.path.isabs(program) else shutil.which(program, path="/usr/local/bin:/usr/bin:/bin")
    if not found or not os.path.exists(found):
        return None
    real = os.path.realpath(found)
    return real if real.startswith("/usr/") else None


_JAVAC = "javac -J-Xmx512m " + " ".join(f"-J{f}" for f in _JVM_FLAGS) + " -encoding UTF-8"
_JAR = "jar -J-Xmx256m " + " ".join(f"-J{f}" for f in _JVM_FLAGS)
#: The one artifact of a Java program that declares a package (its classes, in their directories).
JAVA_JAR = "main.jar"
_TSC = f"node {TYPESCRIPT_HOME}/typescript/bin/tsc"
#: -Xss of a Java program's threads in MiB, as Kattis runs Java (open.kattis.com/languages/java).
JAVA_STACK_MB = 64
# The launcher takes -Xss for the thread that runs main(); the later -XX:ThreadStackSize (KiB)
# gives the JVM's other Java threads (reference handler, finalizer, cleaner, ...) the usual
# 1 MiB: every stack is writable memory RLIMIT_DATA counts, and seven 64 MiB stacks would not
# fit a 256 MiB budget (pthread_create fails with EAGAIN before main runs).
_JAVA_STACK = (f"-Xss{JAVA_STACK_MB}m", "-XX:ThreadStackSize=1024")
_NATIVE_OOM = ("std::bad_alloc", "memory allocation of", "Cannot allocate memory")

#: Debian bookworm's Go is 1.19; bookworm-backports carries 1.23 under its own prefix, called by
#: its path so that /usr/bin/go (golang-go) can stay whatever else on the machine needs.
GO = "/usr/lib/go-1.23/bin/go"
_GNU = ("89", "99", "11", "17", "2x")
C_STANDARDS = frozenset(f"{kind}{year}" for kind in ("c", "gnu") for year in _GNU)
CPP_STANDARDS = frozenset(f"{kind}++{year}" for kind in ("c", "gnu") for year in ("98", "03", "11", "14", "17", "20", "23"))

LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in (
        Language("python", frozenset({"python", "py", "python3", "py3", ""}), "main.py", None, ("python3", "main.py"),
                 "/usr/bin/python3", "python3", 5.0, version="3.11", version_command=("/usr/bin/python3", "--version"),
                 oom_markers=("MemoryError",), stack_by_memory=True),
        Language("c", frozenset({"c", ""}), "main.c", "gcc -O2 -std={std} -o out/main {src} -lm", ("./main",),
                 "gcc", "gcc", 1.0, version="12.2", version_command=("gcc", "-dumpfullversion"),
                 standard="gnu17", standards=C_STANDARDS, oom_markers=_NATIVE_OOM, stack_by_memory=True),
        Language("cpp", frozenset({"cpp", "c++", "cc", "cxx", ""}), "main.cpp", "g++ -O2 -std={std} -o out/main {src}",
                 ("./main",), "g++", "g++", 1.0, version="12.2", version_command=("g++", "-dumpfullversion"),
                 standard="gnu++20", standards=CPP_STANDARDS, oom_markers=_NATIVE_OOM, stack_by_memory=True),
        Language("java", frozenset({"java", ""}), "Main.java", f"{_JAVAC} -d out {{src}}",
                 ("java", "-Xmx{mem}m", *_JAVA_STACK, *_JVM_FLAGS, "-cp", "{classpath}", "{main}"), "javac", "openjdk-17-jdk-headless",
                 2.0, version="17", version_command=("javac", "-version"),
                 runtime_mb=192 + JAVA_STACK_MB, reserve_mb=1024, oom_markers=("java.lang.OutOfMemoryError",),
                 compile_packaged=f"{_JAVAC} -d classes {{src}} && {_JAR} --create --no-manifest --file out/{JAVA_JAR} -C classes ."),
        Language("javascript", frozenset({"javascript", "js", "node", "nodejs", ""}), "main.js",
                 "node --check {src} && cp {src} out/main.js", ("node", "--max-old-space-size={mem}", "main.js"),
                 "node", "nodejs", 5.0, version="18.20", version_command=("node", "--version"),
                 runtime_mb=128, reserve_mb=2048, oom_markers=("heap out of memory",)),
        Language("typescript", frozenset({"typescript", "ts", ""}), "main.ts",
                 f"{_TSC} --types node --typeRoots {TYPESCRIPT_HOME}/@types --target es2020 --lib es2020 "
                 "--module commonjs --noEmitOnError --skipLibCheck --outDir out {src}",
                 ("node", "--max-old-space-size={mem}", "main.js"),
                 f"{TYPESCRIPT_HOME}/typescript/bin/tsc", "npm typescript and @types/node (make system-deps)", 5.0,
                 version="5.6", version_command=(f"{TYPESCRIPT_HOME}/typescript/bin/tsc", "--version"),
                 runtime_mb=128, reserve_mb=2048, oom_markers=("heap out of memory",)),
        Language("go", frozenset({"go", "golang", ""}), "main.go", f'GOCACHE="$PWD/.cache/go" GOPATH="$PWD/.go" {GO} build -ldflags="-s -w" -o out/main {{src}}',
                 ("./main",), GO, "golang-1.23-go (bookworm-backports)", 2.0, version="1.23", version_command=(GO, "version"),
                 runtime_mb=64, reserve_mb=2048, oom_markers=("runtime: out of memory",),
                 env={"GO111MODULE": "off", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0", "GOMEMLIMIT": "{mem}MiB"}),
        Language("rust", frozenset({"rust", "rs", ""}), "main.rs",
                 "rustc --edition 2021 -O -C strip=symbols -C debuginfo=0 -o out/main {src}", ("./main",),
                 "rustc", "rustc-web", 2.5, version="1.96", version_command=("rustc", "--version"), oom_markers=_NATIVE_OOM,
                 stack_by_memory=True),
    )
}  # fmt: skip
# Stack, as the judges set it (Kattis: "for C, C++ and Python the heap and stack sizes are limited
# only by the total amount of memory", https://2020.nwerc.eu/system; Codeforces likewise): C, C++,
# Rust and Python get RLIMIT_STACK = the memory budget (stack pages count toward RLIMIT_AS, so
# the budget still bounds stack + heap together). Go grows goroutine stacks on its heap (up to
# 1 GB) whatever RLIMIT_STACK says. Java's main thread gets -Xss (JAVA_STACK_MB, Kattis'
# `java -Xss64m`), reserved as writable memory that RLIMIT_DATA counts, hence in `runtime_mb`.
# node keeps the host's stack: a larger --stack-size makes V8 assume more stack than the
# process has (a segfault instead of a RangeError).


def language(name: str) -> Language:
    """The language called `name` (ConfigError naming the supported ones otherwise)."""
    try:
        return LANGUAGES[name]
    except KeyError:
        raise ConfigError(f"language {name!r} is not supported; use one of {', '.join(sorted(LANGUAGES))}") from None


@functools.cache
def compile_limits() -> Limits:
    """Limits of a compile job: compilers are big programs (rustc, javac and tsc take seconds
    and hundreds of MiB), so they get their own, looser limits than the tests. The build leaves
    as base64 on stdout, which the host reads as one frame (at most 64 MiB): 48 MiB of output
    holds the largest build a test run can be handed (32 MiB), and more stops the compile as
    `output_limit`, a compile limit, rather than as an oversized frame."""
    return Limits(cpu_seconds=30.0, wall_seconds=90.0, memory_bytes=2048 * _MIB, address_space_bytes=8192 * _MIB,
                  processes=64, open_files=256, file_size_bytes=128 * _MIB, tmp_bytes=384 * _MIB, tmp_inodes=16384,
                  output_bytes=48 * _MIB)  # fmt: skip


def run_env(lang: Language, memory_mb: int) -> dict[str, str]:
    return {key: value.format(mem=memory_mb) for key, value in lang.env.items()}
