"""Builds that hit a limit are `compile_limit` (a 0, never cached, never an error), and the
on-disk build cache serves only entries it signed itself."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from code_toolchains import require_toolchain

from rewardlab.core import Sample, Status
from rewardlab.errors import ConfigError
from rewardlab.verify.code import LANGUAGES, CodeTests
from rewardlab.verify.code.compile import BuildCache, build_key, compile_program

# initialised, so the array is in the binary's data (not bss), and read at a runtime index
BIG = '#include <stdio.h>\nchar big[{mib} << 20] = {{1}};\nint main(int c, char **v) {{ printf("%d\\n", big[c - 1]); return 0; }}\n'
ONE = {"cases": [{"input": "", "output": "1"}]}


def _c(source: str) -> Sample:
    return Sample(response=f"```c\n{source}```", reference=ONE)


@pytest.mark.slow
@pytest.mark.parametrize("mib", [40, 70])
def test_binary_larger_than_the_frame_cap_is_compile_limit(mib: int) -> None:
    # 40 MiB fits the compile job's output as base64 but no test run can be handed it; 70 MiB
    # does not fit the output frame at all. Both are the program's doing: an ok 0.
    require_toolchain("c")
    result = CodeTests(workers=1, language="c", cpu_seconds=1.0, wall_seconds=6.0).score(_c(BIG.format(mib=mib)))
    assert result.status is Status.OK, result.error
    assert result.score == 0.0 and result.info["compile"]["status"] == "compile_limit", result.info["compile"]


@pytest.mark.slow
def test_binary_larger_than_the_runs_tmp_is_compile_limit() -> None:
    require_toolchain("c")
    reward = CodeTests(workers=1, language="c", cpu_seconds=1.0, wall_seconds=6.0, tmp_mb=8)
    result = reward.score(_c(BIG.format(mib=12)))
    assert result.status is Status.OK, result.error
    assert result.info["compile"]["status"] == "compile_limit" and "raise tmp_mb" in result.info["compile"]["message"]
    assert CodeTests(workers=1, language="c", cpu_seconds=1.0, wall_seconds=6.0).score(_c(BIG.format(mib=12))).score == 1.0


# Each level doubles the preprocessor's tokens: cc1 runs out of memory and says so (it exits,
# it is not killed), which a compile error looks like unless its message is read.
MACRO_BOMB = "\n".join(["#define A0 x+", *(f"#define A{i} A{i - 1} A{i - 1}" for i in range(1, 40)),
                        "int main(void) { int x = 0; return A36 0; }", ""])  # fmt: skip


@pytest.mark.slow
def test_compile_out_of_memory_is_compile_limit_and_not_cached(tmp_path: Path) -> None:
    require_toolchain("c")
    cache = BuildCache(cache_dir=str(tmp_path))
    reward = CodeTests(workers=1, language="c", cpu_seconds=1.0, wall_seconds=6.0)
    build = compile_program(reward.pool, LANGUAGES["c"], MACRO_BOMB, memory_mb=256, cache=cache)
    assert build.status == "compile_limit", build.message[-300:]
    assert "out of memory" in build.message
    assert cache.get(build_key(LANGUAGES["c"], MACRO_BOMB, 256)) is None  # neither in memory nor on disk
    assert not list(tmp_path.rglob("*.tar"))


HONEST = '#include <stdio.h>\nint main(void) { puts("1"); return 0; }\n'
PLANTED = '#include <stdio.h>\nint main(void) { puts("planted"); return 0; }\n'


def _entry(cache_dir: Path, source: str) -> Path:
    key = build_key(LANGUAGES["c"], source, 1024)
    return cache_dir / key[:2] / f"{key}.tar"


def test_planted_build_cache_entry_is_rebuilt_not_served(tmp_path: Path) -> None:
    require_toolchain("c")
    reward = CodeTests(workers=1, language="c", cpu_seconds=1.0, wall_seconds=6.0)
    for source in (HONEST, PLANTED):
        compile_program(reward.pool, LANGUAGES["c"], source, memory_mb=1024, cache=BuildCache(cache_dir=str(tmp_path)))
    # someone who can write the directory (not read its secret) swaps the honest entry for another
    shutil.copyfile(_entry(tmp_path, PLANTED), _entry(tmp_path, HONEST))
    build = compile_program(reward.pool, LANGUAGES["c"], HONEST, memory_mb=1024, cache=BuildCache(cache_dir=str(tmp_path)))
    assert build.ok and not build.cached
    result = reward.pool.run(argv=["./main"], files=build.artifacts)
    assert result.stdout == "1\n"
    again = compile_program(reward.pool, LANGUAGES["c"], HONEST, memory_mb=1024, cache=BuildCache(cache_dir=str(tmp_path)))
    assert again.cached and again.artifacts == build.artifacts  # the rebuilt entry is signed and served


def test_build_cache_secret_readable_by_others_is_refused(tmp_path: Path) -> None:
    require_toolchain("c")
    reward = CodeTests(workers=1, language="c", cpu_seconds=1.0, wall_seconds=6.0)
    compile_program(reward.pool, LANGUAGES["c"], HONEST, memory_mb=1024, cache=BuildCache(cache_dir=str(tmp_path)))
    secret = tmp_path / ".rewardlab-build-key"
    assert secret.stat().st_mode & 0o777 == 0o600
    os.chmod(secret, 0o644)
    with pytest.raises(ConfigError, match="0600"):
        BuildCache(cache_dir=str(tmp_path)).get(build_key(LANGUAGES["c"], HONEST, 1024))
