"""The spawner: a small C program that starts each test of a batch (host side: its source and build).

Inside the sandbox B starts a test with `posix_spawn` of this program instead of forking
itself (a fork of a Python process costs several times a plain run's CPU). The spawner, in
the new process and before any code of the test runs, does what a forked test does in Python
(`_batch.become_test`): closes every descriptor but its standard streams and the set-up pipe
(fd 3, closed on exec), puts back the signals posix_spawn left ignored, enters /tmp, sets no_new_privs, applies the test's rlimits, installs
the seccomp filter, then execs the command. A failure of its own set-up is written to fd 3
(a fault of the sandbox, not a verdict); a command that cannot be executed exits 127 as a
forked test does.

B keeps the program in a sealed memfd (never in /tmp, which the tests can write) and runs it
through /proc/self/fd. It is built once per host process, statically when the C library
allows it (no dynamic loader per test); without a C compiler batches fork each test as before.

Arguments: spawner FILTER_HEX COUNT (RESOURCE SOFT HARD){COUNT} -- COMMAND...
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile

EXTRAS = [["-static"], []]
SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SETUP_FD 3

static void fault(const char *what) {
    dprintf(SETUP_FD, "spawner: %s: %s\n", what, strerror(errno));
    _exit(126);
}

static unsigned long long number(const char *text) {
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno || end == text || *end) { errno = EINVAL; fault("a limit that is not a number"); }
    return value;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    errno = EINVAL;
    fault("a filter that is not hexadecimal");
    return 0;
}

static unsigned char filter[1 << 15];

/* posix_spawn leaves the C library's two internal signals (32, 33) ignored in the child, and an
   ignored signal stays ignored across exec: put them back to their default, as in a forked
   test. The C library refuses sigaction() on them, so the system call is made directly. */
static void default_internal_signals(void) {
    struct { void *handler; unsigned long flags; void *restorer; unsigned long mask; } action = {0};
    for (int sig = 32; sig <= 33; sig++)
        if (syscall(SYS_rt_sigaction, sig, &action, NULL, 8) != 0) fault("signal disposition");
}

int main(int argc, char **argv) {
    if (argc < 4) { errno = EINVAL; fault("too few arguments"); }
    if (syscall(SYS_close_range, SETUP_FD + 1, ~0U, 0) != 0) {
        for (int fd = SETUP_FD + 1; fd < 65536; fd++) close(fd);
    }
    if (fcntl(SETUP_FD, F_SETFD, FD_CLOEXEC) != 0) fault("set-up descriptor");
    default_internal_signals();
    if (chdir("/tmp") != 0) fault("chdir /tmp");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fault("no_new_privs");
    size_t hex = strlen(argv[1]);
    if (hex % 16 || hex / 2 > sizeof filter) { errno = EINVAL; fault("filter length"); }
    for (size_t i = 0; i < hex / 2; i++) filter[i] = (unsigned char)(hexval(argv[1][2 * i]) << 4 | hexval(argv[1][2 * i + 1]));
    unsigned long long count = number(argv[2]);
    int at = 3;
    for (unsigned long long k = 0; k < count; k++, at += 3) {
        if (at + 3 > argc) { errno = EINVAL; fault("too few limits"); }
        struct rlimit limit = {number(argv[at + 1]), number(argv[at + 2])};
        if (setrlimit((int)number(argv[at]), &limit) != 0) fault("setrlimit");
    }
    if (at + 1 >= argc || strcmp(argv[at], "--") != 0) { errno = EINVAL; fault("no command"); }
    if (hex) {
        struct sock_fprog prog = {(unsigned short)(hex / 16), (struct sock_filter *)filter};
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) fault("seccomp filter");
    }
    execvp(argv[at + 1], argv + at + 1);
    dprintf(2, "cannot execute %s: %s\n", argv[at + 1], strerror(errno));
    _exit(127);
}
"""


@functools.cache
def spawner_binary() -> bytes | None:
    """The spawner built for this host (statically if it links so), or None without a C compiler
    or when the build fails: batches then fork each test from Python."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    with tempfile.TemporaryDirectory(prefix="rewardlab-spawner-") as where:
        source, out = os.path.join(where, "spawner.c"), os.path.join(where, "spawner")
        with open(source, "w") as f:
            f.write(SOURCE)
        for extra in EXTRAS:
            try:
                done = subprocess.run([compiler, "-O2", *extra, "-o", out, source], capture_output=True, timeout=60)
            except (OSError, subprocess.SubprocessError):
                return None
            if done.returncode == 0:
                with open(out, "rb") as f:
                    return f.read()
    return None
