"""The sandbox attacks again, as native programs: C that calls the kernel directly, without an
interpreter in between. One C program holds every attack (argv[1] picks it), built once in
the sandbox the way `code.tests` builds candidates; each test runs one attack and checks it
was contained, and that the pool still works and kept no process of it."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest
from sandbox_helpers import (
    ATTACK_LIMITS,
    STEADY,
    assert_pool_healthy,
    needs_bwrap,
    process_list,
    settled,
    worker_pids,
)

from rewardlab.sandbox import ExecResult, Outcome, SandboxPool
from rewardlab.verify.code.compile import Build, BuildCache, compile_program
from rewardlab.verify.code.languages import LANGUAGES

pytestmark = needs_bwrap

ATTACKS = r"""
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* errno read after the call (a printf argument list has no order of evaluation) */
#define REPORT(name, call) do { errno = 0; long rc_ = (long)(call); int e_ = errno; printf("%s %ld %d\n", name, rc_, e_); } while (0)

static void try_open(const char *path, int flags) {
    int fd = open(path, flags, 0644);
    if (fd < 0) { printf("%s denied %d\n", path, errno); return; }
    char buf[64] = {0};
    if (flags == O_RDONLY) { ssize_t n = read(fd, buf, 40); printf("%s READ %zd %.40s\n", path, n, buf); }
    else printf("%s WROTE\n", path);
    close(fd);
}

int main(int argc, char **argv) {
    const char *attack = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!strcmp(attack, "fork_bomb")) { for (;;) fork(); }
    if (!strcmp(attack, "malloc_bomb")) {
        long mib = 0;
        for (;;) { char *p = malloc(1 << 20); if (!p) break; memset(p, 1, 1 << 20); mib++; }
        printf("%ld\n", mib); return 0;
    }
    if (!strcmp(attack, "shared_mmap_bomb")) {  /* MAP_SHARED|MAP_ANONYMOUS: not RLIMIT_DATA's, RLIMIT_AS's */
        long mib = 0;
        for (;;) {
            char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) break;
            memset(p, 1, 1 << 20); mib++;
        }
        printf("%ld\n", mib); return 0;
    }
    if (!strcmp(attack, "disk_fill")) {
        long written = 0; char block[1 << 16]; memset(block, 'x', sizeof block);
        for (int i = 0; i < 1000; i++) {
            char name[64]; snprintf(name, sizeof name, "/tmp/fill%d", i);
            int fd = open(name, O_WRONLY | O_CREAT, 0644);
            if (fd < 0) { printf("%ld %d\n", written, errno); return 0; }
            for (int j = 0; j < 32; j++) {
                ssize_t n = write(fd, block, sizeof block);
                if (n < 0) { printf("%ld %d\n", written, errno); return 0; }
                written += n;
            }
            close(fd);
        }
        printf("%ld 0\n", written); return 0;
    }
    if (!strcmp(attack, "output_flood")) { for (;;) fputs("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n", stdout); }
    if (!strcmp(attack, "network")) {
        const char *hosts[] = {"127.0.0.1", "1.1.1.1", "10.0.0.1"};
        int ports[] = {atoi(argv[2]), 80, 80};
        for (int i = 0; i < 3; i++) {
            int s = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(ports[i])};
            inet_pton(AF_INET, hosts[i], &addr.sin_addr);
            if (s >= 0 && connect(s, (struct sockaddr *)&addr, sizeof addr) == 0) printf("connected %s\n", hosts[i]);
            else printf("refused %d\n", errno);
            if (s >= 0) close(s);
        }
        return 0;
    }
    if (!strcmp(attack, "read_host_files")) { for (int i = 2; i < argc; i++) try_open(argv[i], O_RDONLY); return 0; }
    if (!strcmp(attack, "write_outside_tmp")) { for (int i = 2; i < argc; i++) try_open(argv[i], O_WRONLY | O_CREAT); return 0; }
    if (!strcmp(attack, "hidden_memory")) {
        REPORT("memfd_create", syscall(SYS_memfd_create, "stash", 0));
        REPORT("shmget", shmget(IPC_PRIVATE, 64 << 20, IPC_CREAT | 0600));
        int fd = open("/dev/shm/stash", O_RDWR | O_CREAT, 0600);  /* POSIX shm: a file of the capped tmpfs */
        long kept = 0; char block[1 << 16]; memset(block, 'y', sizeof block);
        while (fd >= 0) { ssize_t n = write(fd, block, sizeof block); if (n <= 0) break; kept += n; }
        printf("dev_shm %ld %d\n", kept, errno); return 0;
    }
    if (!strcmp(attack, "ptrace")) {
        pid_t parent = getppid();
        REPORT("ptrace_attach", ptrace(PTRACE_ATTACH, parent, 0, 0));
        REPORT("ptrace_traceme", ptrace(PTRACE_TRACEME, 0, 0, 0));
        char buf[8]; struct iovec local = {buf, 8}, remote = {(void *)0x400000, 8};
        REPORT("process_vm_readv", process_vm_readv(parent, &local, 1, &remote, 1, 0));
        REPORT("proc_mem", open("/proc/1/mem", O_RDONLY));
        return 0;
    }
    if (!strcmp(attack, "escape_namespaces")) {
        REPORT("unshare", unshare(CLONE_NEWUSER));
        REPORT("mount", mount("none", "/usr", NULL, MS_REMOUNT | MS_BIND, NULL));
        REPORT("chroot", chroot("/tmp"));
        return 0;
    }
    if (!strcmp(attack, "kill_parent")) {
        pid_t targets[] = {getppid(), 1, -1};
        for (int i = 0; i < 3; i++) REPORT("kill", kill(targets[i], SIGKILL));
        printf("still here\n");
        kill(0, SIGUSR1);
        printf("survived killpg\n"); return 0;
    }
    if (!strcmp(attack, "daemon")) {
        if (fork() == 0) { setsid(); if (fork() == 0) for (;;) usleep(50000); _exit(0); }
        printf("parent leaves\n"); return 0;
    }
    if (!strcmp(attack, "ignore_sigxcpu")) {
        signal(SIGXCPU, SIG_IGN);
        volatile unsigned long x = 0; for (;;) x++;
    }
    if (!strcmp(attack, "environment")) { extern char **environ; for (char **e = environ; *e; e++) puts(*e); return 0; }
    return 9;
}
"""


@pytest.fixture(scope="module")
def attacks(pool: SandboxPool) -> Build:
    if not LANGUAGES["c"].available():
        if os.environ.get("CI"):
            pytest.fail("gcc is not installed; CI must run the native attacks (make system-deps)", pytrace=False)
        pytest.skip("gcc is not installed")
    build = compile_program(pool, LANGUAGES["c"], ATTACKS, memory_mb=256, cache=BuildCache())
    assert build.ok, build.message
    return build


@pytest.fixture(autouse=True)
def _pool_survives(pool: SandboxPool) -> Iterator[None]:
    assert_pool_healthy(pool)
    assert settled(pool) == STEADY
    yield
    assert_pool_healthy(pool)
    assert settled(pool) == STEADY, f"a process of the attack outlived its job: {process_list(pool)}"


def attack(pool: SandboxPool, build: Build, *args: str, limits: object = ATTACK_LIMITS) -> ExecResult:
    return pool.run(argv=["./main", *args], files=build.artifacts, limits=limits)  # type: ignore[arg-type]


@pytest.mark.slow
def test_fork_bomb_in_c_is_contained(pool: SandboxPool, attacks: Build) -> None:
    result = attack(pool, attacks, "fork_bomb")
    assert result.outcome in (Outcome.CPU_TIMEOUT, Outcome.WALL_TIMEOUT, Outcome.SIGNALLED), result.reason()


def test_malloc_bomb_stops_at_the_data_limit(pool: SandboxPool, attacks: Build) -> None:
    result = attack(pool, attacks, "malloc_bomb")
    assert result.ok, result.reason()
    assert int(result.stdout) <= ATTACK_LIMITS.memory_bytes >> 20


def test_shared_anonymous_memory_stops_at_the_address_space_limit(pool: SandboxPool, attacks: Build) -> None:
    """RLIMIT_DATA does not count shared mappings; the address-space ceiling does."""
    loose = replace(ATTACK_LIMITS, address_space_bytes=2 * ATTACK_LIMITS.memory_bytes)
    result = attack(pool, attacks, "shared_mmap_bomb", limits=loose)
    assert result.ok, result.reason()
    assert int(result.stdout) <= loose.address_space_bytes >> 20  # type: ignore[operator]


def test_disk_fill_in_c_is_contained(pool: SandboxPool, attacks: Build) -> None:
    written, errno = attack(pool, attacks, "disk_fill").stdout.split()
    assert int(written) <= ATTACK_LIMITS.tmp_bytes and int(errno) in (28, 27)  # ENOSPC or EFBIG


def test_output_flood_in_c_is_cut(pool: SandboxPool, attacks: Build) -> None:
    result = attack(pool, attacks, "output_flood")
    assert result.outcome is Outcome.OUTPUT_LIMIT and len(result.stdout) <= ATTACK_LIMITS.output_bytes


def test_network_from_c_fails(pool: SandboxPool, attacks: Build) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    accepted: list[object] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(server.accept())

    thread = threading.Thread(target=accept)
    thread.start()
    result = attack(pool, attacks, "network", str(server.getsockname()[1]))
    thread.join()
    server.close()
    assert "connected" not in result.stdout and result.stdout.count("refused") == 3, result.stdout
    assert accepted == []


def test_reading_host_files_from_c_fails(pool: SandboxPool, attacks: Build, tmp_path: os.PathLike[str]) -> None:
    secret = os.path.join(tmp_path, "secret.txt")
    with open(secret, "w") as f:
        f.write("TOP-SECRET-HOST-FILE")
    os.chmod(secret, 0o644)
    targets = [secret, "/etc/shadow", "/etc/passwd", "/root/.bashrc", os.path.abspath("pyproject.toml"), "/proc/1/environ"]
    result = attack(pool, attacks, "read_host_files", *targets)
    lines = result.stdout.splitlines()
    assert len(lines) == len(targets) and all(" denied " in line for line in lines), lines
    assert "TOP-SECRET" not in result.stdout


def test_writing_outside_tmp_from_c_fails(pool: SandboxPool, attacks: Build) -> None:
    targets = ["/usr/x", "/etc/x", "/x", "/proc/x", "/dev/x", "/work/x", "/lib/x"]
    result = attack(pool, attacks, "write_outside_tmp", *targets)
    assert "WROTE" not in result.stdout and result.stdout.count("denied") == len(targets), result.stdout
    assert not any(os.path.exists(p) for p in targets if not p.startswith(("/proc", "/dev")))


def test_memory_outside_the_limits_is_refused_to_c(pool: SandboxPool, attacks: Build) -> None:
    lines = attack(pool, attacks, "hidden_memory").stdout.splitlines()
    assert lines[0] == "memfd_create -1 1" and lines[1] == "shmget -1 1", lines  # EPERM (seccomp)
    kept, errno = lines[2].split()[1:]
    assert int(kept) <= ATTACK_LIMITS.tmp_bytes and int(errno) in (28, 27), lines  # /dev/shm is the capped tmpfs


def test_ptrace_and_reading_other_processes_fail_in_c(pool: SandboxPool, attacks: Build) -> None:
    lines = attack(pool, attacks, "ptrace").stdout.splitlines()
    assert lines[:3] == ["ptrace_attach -1 1", "ptrace_traceme -1 1", "process_vm_readv -1 1"], lines
    assert lines[3].startswith("proc_mem -1 "), lines  # the guard is not dumpable


def test_new_namespaces_mounts_and_chroot_fail_in_c(pool: SandboxPool, attacks: Build) -> None:
    assert attack(pool, attacks, "escape_namespaces").stdout.splitlines() == ["unshare -1 1", "mount -1 1", "chroot -1 1"]


def test_killing_the_parent_from_c_fails(pool: SandboxPool, attacks: Build) -> None:
    before = worker_pids(pool)
    result = attack(pool, attacks, "kill_parent")
    assert "still here" in result.stdout and "survived killpg" not in result.stdout, result.stdout
    assert result.outcome is Outcome.SIGNALLED and result.signal == signal.SIGUSR1
    assert worker_pids(pool) == before


def test_daemon_forked_from_c_is_killed(pool: SandboxPool, attacks: Build) -> None:
    result = attack(pool, attacks, "daemon")
    assert result.ok and result.stdout == "parent leaves\n"  # `_pool_survives`: nothing of it is left


@pytest.mark.slow
def test_ignoring_sigxcpu_in_c_does_not_buy_time(pool: SandboxPool, attacks: Build) -> None:
    result = attack(pool, attacks, "ignore_sigxcpu", limits=replace(ATTACK_LIMITS, wall_seconds=8.0))
    assert result.outcome in (Outcome.CPU_TIMEOUT, Outcome.WALL_TIMEOUT), result.reason()
    if result.outcome is Outcome.CPU_TIMEOUT:
        assert result.signal == signal.SIGKILL


def test_c_program_sees_only_the_clean_environment(pool: SandboxPool, attacks: Build, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWARDLAB_TEST_SECRET", "hunter2-api-key")
    result = attack(pool, attacks, "environment")
    names = sorted(line.split("=", 1)[0] for line in result.stdout.splitlines())
    assert "hunter2" not in result.stdout
    assert names == ["HOME", "LANG", "PATH", "PYTHONHASHSEED"], names
