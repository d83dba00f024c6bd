"""A seccomp-BPF deny-list for sandboxed programs (x86_64), installed by the job itself.

Standard library only (it runs inside the sandbox, prepended to `_server.py`). Like the
filters of Docker and nsjail, it refuses system calls that a test program never needs and that
kernel exploits like: debugging other processes, keyrings, BPF, userfaultfd, perf events,
io_uring, module loading, new mounts and namespaces. It also refuses the ways to hold memory
that RLIMIT_AS does not count: memfd_create/memfd_secret (anonymous files: written with write(),
never mapped) and SysV shared memory segments and message queues (kept by the kernel after
detaching). Everything else is allowed: this narrows the kernel surface, it is not an
allow-list.

Numbers are the x86_64 table (arch/x86/entry/syscalls/syscall_64.tbl, checked against
<asm/unistd_64.h>). On another architecture no filter is installed and `install_seccomp` says so.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import platform
import struct
from typing import Any

DENIED_X86_64: dict[str, int] = {
    "ptrace": 101, "syslog": 103, "vhangup": 153, "pivot_root": 155, "chroot": 161, "acct": 163,
    "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169,
    "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173, "init_module": 175,
    "delete_module": 176, "quotactl": 179, "lookup_dcookie": 212, "kexec_load": 246,
    "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298,
    "fanotify_init": 300, "name_to_handle_at": 303, "open_by_handle_at": 304, "setns": 308,
    "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "finit_module": 313,
    "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
    # memory outside RLIMIT_AS (files of /tmp and /dev/shm are capped by their tmpfs instead)
    "shmget": 29, "msgget": 68, "memfd_create": 319, "memfd_secret": 447,
}  # fmt: skip
# clone3 takes its flags through a pointer a filter cannot read: refuse it with ENOSYS, which
# makes the C library fall back to clone(), whose flags the namespace limits already police.
ENOSYS_X86_64: dict[str, int] = {"clone3": 435}

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO, SECCOMP_RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x06
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
_MACHINE = platform.machine()


@functools.lru_cache(maxsize=1)  # built once in the server; every job inherits it
def seccomp_program() -> bytes:
    """The BPF program: wrong architecture -> kill; x32 numbers -> ENOSYS; denied -> EPERM."""
    insns = [
        (BPF_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (BPF_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        (BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
        (BPF_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (BPF_JGE_K, 0, 1, X32_SYSCALL_BIT),
        (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS),
    ]
    for table, err in ((DENIED_X86_64, errno.EPERM), (ENOSYS_X86_64, errno.ENOSYS)):
        for nr in table.values():
            insns += [(BPF_JEQ_K, 0, 1, nr), (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | err)]
    insns.append((BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    return b"".join(struct.pack("=HBBI", *insn) for insn in insns)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


@functools.cache
def _fprog() -> tuple[Any, _SockFprog]:
    """The filter as the kernel takes it (and the buffer it points into), made once in the
    server and inherited by every job."""
    program = seccomp_program()
    buffer = ctypes.create_string_buffer(program, len(program))
    return buffer, _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))


def install_seccomp(libc: Any) -> bool:
    """Install the filter on the calling process (needs no_new_privs set first). False when
    the architecture has no table; OSError when the kernel refuses."""
    if _MACHINE != "x86_64":
        return False
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(_fprog()[1]), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp filter: {errno.errorcode.get(err, err)}")
    return True
