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
through /proc/self/fd. It is built once per host process. On x86_64 it is built without a C
library (raw system calls): the start-up of a static C library costs more than the rest of
the spawner (about 0.6 ms per test, measured), the kernel's exec of a tiny static program
almost nothing. Elsewhere, or if that build fails, the same steps are built on the C library
(static if it links so); without a C compiler batches fork each test as before.

Arguments: spawner FILTER_HEX COUNT (RESOURCE SOFT HARD){COUNT} -- COMMAND...
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
import tempfile

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


FREESTANDING_SOURCE = r"""
/* The spawner without a C library (x86_64 Linux): raw system calls only, so its exec costs
   little more than the kernel's work (a static C library's start-up costs more than a test). */
#include <asm/unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#define SETUP_FD 3
#define F_SETFD 2
#define FD_CLOEXEC 1
#define PR_SET_SECCOMP 22
#define PR_SET_NO_NEW_PRIVS 38
#define EINVAL 22
#define ENOENT 2
#define ENOTDIR 20
#define EACCES 13

typedef unsigned long size_t;

static long sys6(long n, long a, long b, long c, long d, long e) {
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
    return r;
}
#define sys(n, a, b, c) sys6(n, (long)(a), (long)(b), (long)(c), 0, 0)

void *memset(void *s, int c, size_t n) { unsigned char *p = s; while (n--) *p++ = (unsigned char)c; return s; }
void *memcpy(void *d, const void *s, size_t n) { unsigned char *p = d; const unsigned char *q = s; while (n--) *p++ = *q++; return d; }

static size_t length(const char *s) { size_t n = 0; while (s[n]) n++; return n; }
static void put(int fd, const char *s) { sys(__NR_write, fd, s, length(s)); }

static const char *reason(long err) {
    switch (err) {
    case 1: return "Operation not permitted";
    case 2: return "No such file or directory";
    case 7: return "Argument list too long";
    case 8: return "Exec format error";
    case 12: return "Cannot allocate memory";
    case 13: return "Permission denied";
    case 20: return "Not a directory";
    case 21: return "Is a directory";
    case 22: return "Invalid argument";
    case 26: return "Text file busy";
    case 36: return "File name too long";
    case 40: return "Too many levels of symbolic links";
    default: return "error";
    }
}

static void __attribute__((noreturn)) leave(int code) { for (;;) sys(__NR_exit_group, code, 0, 0); }

static void __attribute__((noreturn)) fault(const char *what, long err) {
    put(SETUP_FD, "spawner: "); put(SETUP_FD, what); put(SETUP_FD, ": "); put(SETUP_FD, reason(err)); put(SETUP_FD, "\n");
    leave(126);
}

static void check(long rc, const char *what) { if (rc < 0) fault(what, -rc); }

static unsigned long long number(const char *text) {
    unsigned long long value = 0;
    if (!*text) fault("a limit that is not a number", EINVAL);
    for (; *text; text++) {
        if (*text < '0' || *text > '9') fault("a limit that is not a number", EINVAL);
        unsigned long long digit = (unsigned long long)(*text - '0');
        if (value > (~0ULL - digit) / 10) fault("a limit that is not a number", EINVAL);
        value = value * 10 + digit;
    }
    return value;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    fault("a filter that is not hexadecimal", EINVAL);
}

static unsigned char filter[1 << 15];
static char path[4096 + 256];

static int same(const char *a, const char *b) { while (*a && *a == *b) a++, b++; return *a == *b; }

static void __attribute__((noreturn)) run(char **argv, char **envp) {
    const char *name = argv[0];
    long err = ENOENT;
    int slash = 0;
    for (const char *c = name; *c; c++) slash |= *c == '/';
    if (slash || !*name) {
        err = -sys(__NR_execve, name, argv, envp);
    } else {
        const char *dirs = "/bin:/usr/bin";  /* as the C library's execvp without PATH */
        for (char **e = envp; *e; e++)
            if ((*e)[0] == 'P' && (*e)[1] == 'A' && (*e)[2] == 'T' && (*e)[3] == 'H' && (*e)[4] == '=') { dirs = *e + 5; break; }
        size_t n = length(name);
        int denied = 0;
        for (const char *d = dirs;; d++) {
            const char *end = d;
            while (*end && *end != ':') end++;
            size_t dn = (size_t)(end - d);
            if ((dn ? dn : 1) + 1 + n + 1 <= sizeof path) {  /* an empty entry is "." */
                size_t at = 0;
                if (dn == 0) path[at++] = '.';
                for (const char *c = d; c < end; c++) path[at++] = *c;
                path[at++] = '/';
                for (size_t i = 0; i <= n; i++) path[at++] = name[i];
                long e = -sys(__NR_execve, path, argv, envp);
                if (e == EACCES) denied = 1;
                else if (e != ENOENT && e != ENOTDIR) { err = e; break; }
            }
            if (!*end) { if (denied) err = EACCES; break; }
            d = end;
        }
    }
    put(2, "cannot execute "); put(2, name); put(2, ": "); put(2, reason(err)); put(2, "\n");
    leave(127);
}

void __attribute__((noreturn, used)) spawner_main(long *sp) {
    int argc = (int)sp[0];
    char **argv = (char **)(sp + 1), **envp = argv + argc + 1;
    if (argc < 4) fault("too few arguments", EINVAL);
    if (sys(__NR_close_range, SETUP_FD + 1, ~0U, 0) < 0)
        for (int fd = SETUP_FD + 1; fd < 65536; fd++) sys(__NR_close, fd, 0, 0);
    check(sys(__NR_fcntl, SETUP_FD, F_SETFD, FD_CLOEXEC), "set-up descriptor");
    /* posix_spawn leaves the C library's two internal signals (32, 33) ignored in the child,
       and an ignored signal stays ignored across exec: back to their default, as in a forked test. */
    unsigned long action[4] = {0, 0, 0, 0};  /* handler SIG_DFL, flags, restorer, mask */
    for (int sig = 32; sig <= 33; sig++) check(sys6(__NR_rt_sigaction, sig, (long)action, 0, 8, 0), "signal disposition");
    check(sys(__NR_chdir, "/tmp", 0, 0), "chdir /tmp");
    check(sys6(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs");
    size_t hex = length(argv[1]);
    if (hex % 16 || hex / 2 > sizeof filter) fault("filter length", EINVAL);
    for (size_t i = 0; i < hex / 2; i++) filter[i] = (unsigned char)(hexval(argv[1][2 * i]) << 4 | hexval(argv[1][2 * i + 1]));
    unsigned long long count = number(argv[2]);
    int at = 3;
    for (unsigned long long k = 0; k < count; k++, at += 3) {
        if (at + 3 > argc) fault("too few limits", EINVAL);
        unsigned long long limit[2] = {number(argv[at + 1]), number(argv[at + 2])};
        check(sys(__NR_setrlimit, number(argv[at]), limit, 0), "setrlimit");
    }
    if (at + 1 >= argc || !same(argv[at], "--")) fault("no command", EINVAL);
    if (hex) {
        struct sock_fprog prog = {(unsigned short)(hex / 16), (struct sock_filter *)filter};
        check(sys6(__NR_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, (long)&prog, 0, 0), "seccomp filter");
    }
    run(argv + at + 1, envp);
}

__asm__(".text\n.globl _start\n_start:\n xor %rbp, %rbp\n mov %rsp, %rdi\n and $-16, %rsp\n call spawner_main\n hlt\n");
"""
# No loop may become a call to memset/memcpy (they are defined here, and would call themselves).
FREESTANDING_FLAGS = ["-static", "-nostdlib", "-ffreestanding", "-fno-stack-protector", "-fno-pie", "-no-pie",
                      "-fno-tree-loop-distribute-patterns"]


def variants() -> list[tuple[str, list[str]]]:
    """The builds to try, cheapest per test first: (source, compiler flags)."""
    found = [(SOURCE, ["-static"]), (SOURCE, [])]
    if platform.machine() == "x86_64":
        found.insert(0, (FREESTANDING_SOURCE, FREESTANDING_FLAGS))
    return found


def build(source: str, flags: list[str]) -> bytes | None:
    """One build of the spawner, or None (no C compiler, or it does not build here)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    with tempfile.TemporaryDirectory(prefix="rewardlab-spawner-") as where:
        path, out = os.path.join(where, "spawner.c"), os.path.join(where, "spawner")
        with open(path, "w") as f:
            f.write(source)
        try:
            done = subprocess.run([compiler, "-O2", *flags, "-o", out, path], capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            return None
        with open(out, "rb") as f:
            return f.read()


@functools.cache
def spawner_binary() -> bytes | None:
    """The spawner for this host (the first of `variants` that builds), or None: batches then
    fork each test from Python."""
    for source, flags in variants():
        program = build(source, flags)
        if program is not None:
            return program
    return None
