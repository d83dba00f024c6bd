"""Jobs that exec a program: binary files, job environment, and the memory rlimits."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest
from sandbox_helpers import ATTACK_LIMITS, needs_bwrap

from rewardlab.errors import ConfigError
from rewardlab.sandbox import Limits, SandboxPool

pytestmark = needs_bwrap

RLIMITS = "import resource\nprint(resource.getrlimit(resource.RLIMIT_DATA)[0], resource.getrlimit(resource.RLIMIT_AS)[0])"


def test_memory_is_rlimit_data_and_address_space_defaults_to_it(pool: SandboxPool) -> None:
    assert pool.run(RLIMITS, limits=ATTACK_LIMITS).stdout.split() == [str(ATTACK_LIMITS.memory_bytes)] * 2
    loose = replace(ATTACK_LIMITS, address_space_bytes=4 * ATTACK_LIMITS.memory_bytes)
    assert pool.run(RLIMITS, limits=loose).stdout.split() == [str(loose.memory_bytes), str(loose.address_space_bytes)]


def test_address_space_below_memory_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="address_space_bytes"):
        Limits(memory_bytes=256 << 20, address_space_bytes=128 << 20)


def test_binary_files_arrive_executable_with_the_job_environment(pool: SandboxPool) -> None:
    true = shutil.which("true")
    assert true is not None
    with open(true, "rb") as f:
        binary = f.read()
    result = pool.run(argv=["/bin/sh", "-c", "./prog && test -x prog && echo $GREETING; ls"],
                      files={"prog": binary, "notes.txt": "text"}, env={"GREETING": "hi"})  # fmt: skip
    assert result.ok, result.reason()
    assert result.stdout.split() == ["hi", "notes.txt", "prog"]


@pytest.mark.parametrize("name", ["../escape", "a/b", "", ".."])
def test_file_names_with_paths_are_refused(pool: SandboxPool, name: str) -> None:
    with pytest.raises(ConfigError, match="plain file name"):
        pool.run(argv=["/bin/true"], files={name: b"x"})


def test_files_larger_than_the_jobs_tmp_are_refused_before_they_are_sent(pool: SandboxPool) -> None:
    with pytest.raises(ConfigError, match="tmp_bytes"):
        pool.run(argv=["/bin/true"], files={"big": b"\0" * (ATTACK_LIMITS.tmp_bytes + 1)}, limits=ATTACK_LIMITS)
    assert pool.run("print('still fine')").stdout == "still fine\n"


def test_binary_files_that_do_not_fit_the_tmpfs_fail_the_job_not_the_worker(pool: SandboxPool) -> None:
    """Files within tmp_bytes that still do not fit the tmpfs page by page: the guard cannot write them,
    the program is told so and exits 127; the next job runs normally."""
    tight = replace(ATTACK_LIMITS, tmp_bytes=1 << 20, file_size_bytes=1 << 20)
    # 1,048,002 bytes pass the host's check, but take 258 pages of 4 KiB where the tmpfs has 256
    result = pool.run(argv=["./a"], files={"a": b"\0", "b": b"\0", "c": b"\0" * 1_048_000}, limits=tight)
    assert result.exit_code == 127 and "cannot write the job's files" in result.stderr, result.reason()
    assert pool.run("print('next')").stdout == "next\n"
