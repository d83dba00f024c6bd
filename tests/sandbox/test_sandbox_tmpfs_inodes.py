"""A job that fills its /tmp with empty files: no byte limit stops it, the inode cap does.

Every file costs kernel memory (inode and dentry) that no rlimit counts and that `tmp_bytes`
does not see; the job's tmpfs caps the count (`Limits.tmp_inodes`), so the host's memory stays
bounded, the job ends on its own, and its teardown (freeing the files) stays short."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from sandbox_helpers import STEADY, assert_pool_healthy, needs_bwrap, settled

from host_memory import MIB, peak_growth
from rewardlab.errors import ConfigError
from rewardlab.sandbox import Limits, SandboxPool
from rewardlab.sandbox.config import HOST_GRACE_SECONDS

pytestmark = needs_bwrap

FLOOD = """
import os
n = 0
try:
    while n < 3_000_000:
        os.close(os.open(f"/tmp/{n}", os.O_CREAT | os.O_WRONLY, 0o600))
        n += 1
except OSError as exc:
    print(n, exc.errno)
"""
# Generous CPU: without an inode cap, 5 CPU-seconds of this loop hold about a GiB of kernel memory.
FLOOD_LIMITS = Limits(cpu_seconds=5.0, wall_seconds=10.0, tmp_bytes=8 * MIB)


@pytest.fixture(scope="module")
def pool2() -> Iterator[SandboxPool]:
    with SandboxPool(size=2) as p:
        p.start()
        yield p


def test_empty_file_flood_is_capped_by_inodes(pool2: SandboxPool) -> None:
    results = []

    def flood() -> None:
        started = time.monotonic()
        results.append((pool2.run(FLOOD, limits=FLOOD_LIMITS), time.monotonic() - started))

    with peak_growth() as growth:
        threads = [threading.Thread(target=flood) for _ in range(2)]  # two jobs at once, as a pool runs them
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(results) == 2
    for result, elapsed in results:
        assert result.ok, result.reason()
        files, errno = map(int, result.stdout.split())
        assert errno == 28 and files <= FLOOD_LIMITS.tmp_inodes  # ENOSPC: out of inodes, not bytes
        assert elapsed < FLOOD_LIMITS.wall_seconds + HOST_GRACE_SECONDS  # no "did not answer in time"
    assert growth.kernel < 64 * MIB, f"host kernel memory grew by {growth.kernel / MIB:.0f} MiB"
    for _ in range(2):
        assert_pool_healthy(pool2)
    assert pool2.run("import os; print(os.listdir('/tmp'))").stdout == "[]\n"  # gone with the job
    assert settled(pool2) == STEADY


def test_inode_cap_is_the_limit_asked_for(pool2: SandboxPool) -> None:
    result = pool2.run(FLOOD, limits=Limits(tmp_inodes=100))
    files, errno = map(int, result.stdout.split())
    assert errno == 28 and 90 <= files <= 100  # the cap counts the directories the job's /tmp is made of


def test_inode_cap_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="tmp_inodes"):
        Limits(tmp_inodes=0)


# Names without new inodes (hard links: a dentry each) and extended attributes: tmpfs charges
# both to the same inode budget, so they stop at the cap as well.
OTHER_FLOODS = {
    "hard_links": "os.link('/tmp/f', f'/tmp/l{n}')",
    "xattrs": "os.setxattr('/tmp/f', f'user.k{n}', b'x' * 200)",
}


@pytest.mark.parametrize("flood", sorted(OTHER_FLOODS))
def test_link_and_xattr_floods_are_capped_too(pool2: SandboxPool, flood: str) -> None:
    code = (
        "import os\nopen('/tmp/f', 'w').close()\nn = 0\ntry:\n    while n < 3_000_000:\n"
        f"        {OTHER_FLOODS[flood]}\n        n += 1\nexcept OSError as exc:\n    print(n, exc.errno)\n"
    )
    with peak_growth() as growth:
        result = pool2.run(code, limits=FLOOD_LIMITS)
    assert result.ok, result.reason()
    assert result.stdout.split()[1] == "28"  # ENOSPC
    assert growth.kernel < 64 * MIB, f"host kernel memory grew by {growth.kernel / MIB:.0f} MiB"
    assert_pool_healthy(pool2)
