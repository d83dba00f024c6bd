"""Build hook: compiles the selection kernel (`src/rewardlab/select/_kernel.c`) into the wheel.

The kernel is a plain C shared library loaded with ctypes (no Python headers, no Python ABI), so
a C compiler is all it needs. Without one the wheel is built without it, with a warning, and
rewardlab uses the numpy version of the same selectors (same results, slower).

`python hatch_build.py` compiles it in place, next to its source: what an editable install does,
and what `make` runs when a reused environment lacks it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
SOURCE = ROOT / "src" / "rewardlab" / "select" / "_kernel.c"
# The ".1" (a soname-style version) keeps the import system and pkgutil from taking it for an
# extension module, as they would any "*.so" (and `_kernel.so` would shadow _kernel.py).
IN_PLACE = SOURCE.with_name("lib_kernel.so.1")
IN_WHEEL = "rewardlab/select/lib_kernel.so.1"
# -ffp-contract=off: no fused multiply-add, which would round the vote tolerance unlike numpy
FLAGS = ["-O3", "-std=c99", "-shared", "-fPIC", "-ffp-contract=off"]


def compile_kernel(target: Path) -> str | None:
    """Compile the kernel into `target`; the compiler's complaint, or None when it built."""
    if sys.platform == "win32":
        return "not built on Windows (no cc); the numpy selectors are used"
    compiler = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()
    command = [*compiler, *FLAGS, f'-DKERNEL_SOURCE_SHA256="{digest}"', "-o", str(target), str(SOURCE), "-lm"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{shlex.join(command)}: {exc}"
    return f"{shlex.join(command)}:\n{done.stderr}" if done.returncode else None


# PEP 600: a manylinux_X_Y wheel runs on any Linux with glibc >= X.Y. The kernel links libc
# (and libm) only, both on the manylinux allow-list, so X.Y is the newest glibc symbol version it
# asks for; a package index refuses a plain linux_x86_64 wheel.
MANYLINUX_LIBS = {"libc.so.6", "libm.so.6"}
MANYLINUX_FLOOR = (2, 17)  # manylinux2014: the oldest tag installers still list for x86_64/aarch64


def _platform_tag(library: Path) -> str:
    """`manylinux_X_Y_<arch>` from the library's glibc symbol versions; the plain platform tag
    where they cannot be read (no objdump) or it links more than libc and libm."""
    plain = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    if not plain.startswith("linux_"):
        return plain
    try:
        dump = subprocess.run(["objdump", "-T", "-p", str(library)], capture_output=True, text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return plain
    needed = set(re.findall(r"NEEDED\s+(\S+)", dump))
    versions = {tuple(int(x) for x in v.split(".")[:2]) for v in re.findall(r"GLIBC_(\d+\.\d+(?:\.\d+)?)", dump)}
    if not needed <= MANYLINUX_LIBS or not versions:
        return plain
    major, minor = max(*versions, MANYLINUX_FLOOR)
    return f"manylinux_{major}_{minor}_{plain.removeprefix('linux_')}"


if __name__ == "__main__":
    problem = compile_kernel(IN_PLACE)
    if problem:
        sys.exit(f"the selection kernel did not build: {problem}")
    print(f"built {IN_PLACE.relative_to(ROOT)}")
else:  # imported by hatchling, which is installed only in the build environment
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface

    class KernelBuildHook(BuildHookInterface):  # type: ignore[misc]  # hatchling is untyped here
        """Compiles the kernel in place for an editable install, into the wheel otherwise."""

        def initialize(self, version: str, build_data: dict[str, Any]) -> None:
            if self.target_name != "wheel":
                return
            if version == "editable":  # the editable install imports src/ itself
                problem = compile_kernel(IN_PLACE)
            else:
                self._scratch = Path(tempfile.mkdtemp(prefix="rewardlab-kernel-"))
                library = self._scratch / IN_PLACE.name
                problem = compile_kernel(library)
                if not problem:
                    build_data["force_include"][str(library)] = IN_WHEEL
                    build_data["pure_python"] = False
                    build_data["tag"] = f"py3-none-{_platform_tag(library)}"  # no Python ABI: ctypes loads it
            if problem:
                self.app.display_warning(f"rewardlab: the selection kernel did not build, numpy is used instead\n{problem}")

        def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
            scratch = getattr(self, "_scratch", None)
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
