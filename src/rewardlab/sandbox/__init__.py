"""Isolated execution of untrusted programs: bubblewrap namespaces, rlimits, a warm pool.

    >>> from rewardlab.sandbox import SandboxPool
    >>> with SandboxPool(size=2) as pool:
    ...     result = pool.run("print(sum(map(int, input().split())))", stdin="2 3")
    >>> result.outcome.value, result.stdout
    ('ok', '5\\n')

A `SandboxPool` keeps `size` sandboxes running, each a fork server (`_server.py`) inside
bubblewrap; every job is a fresh child of it in fresh namespaces, so isolation does not cost an
interpreter start per job. The server keeps two job sandboxes forked ahead of time, so setting
up and tearing down namespaces happens while the host is busy elsewhere. `pool.session(source)`
loads a module in such a child and calls its functions; calls and answers travel on a pipe
pair between the host and the job's pid 1, its guard (`_job.py`), never through the server.
`pool.batch(argv)` runs one command on many stdins in one job sandbox, a fresh process per run
under the run's own limits (`batch.py`): the tests of one build cost a fork and an exec each,
not a job's namespaces.
Values cross the boundary as plain builtins (tagged JSON; a builtin subclass as the plain value it
holds), so the trusted caller compares them itself: an `__eq__` that always says True never leaves.

What is covered
    * Filesystem: only /usr (and the /lib, /bin symlinks), a few /etc files (and the JDK's
      configuration, /etc/java-*-openjdk) and the interpreter's prefix are visible, read-only; the sandbox's own root and /dev are
      remounted read-only too. /home, /root, the project, /sys, /run and the rest of /etc are
      absent. Each job gets its own tmpfs /tmp capped in bytes and files (`tmp_bytes`, `tmp_inodes`) and /dev/shm, gone
      when the job ends; files are capped by RLIMIT_FSIZE.
    * Privileges: uid/gid 65534 in the sandbox; started as root, bubblewrap itself runs as the
      host user `nobody` when the interpreter is reachable by it. Every capability is dropped
      (bwrap `--cap-drop ALL`, then the job's own bounding/ambient/effective sets are emptied
      and `no_new_privs` is set), so `mount -o remount,rw` of a read-only bind fails.
    * Namespaces: new user, pid, network (loopback only), IPC, UTS and cgroup namespaces per
      worker (`bwrap --unshare-all`), plus new user, pid, mount and IPC namespaces and a new
      session per job. A job sees only its own processes in /proc and cannot signal (not even
      through its process group) or ptrace the server or the host; the server is not
      dumpable. A job may not create namespaces of its own (its user namespace's limits are
      0), so it cannot gain capabilities in a fresh one.
    * System calls (x86_64): a seccomp deny-list refuses ptrace, process_vm_*, keyrings, bpf,
      userfaultfd, perf events, io_uring, module loading, mounts, namespaces, memfd, SysV
      shm/msg queues and the x32 ABI.
    * Environment: cleared; PATH, HOME=/tmp, LANG and PYTHONHASHSEED=0 only.
    * Resources: RLIMIT_CPU (SIGXCPU, then SIGKILL one second later: the verdict limit, which
      machine load does not change), RLIMIT_DATA (`memory_bytes`: what a program writes)
      under RLIMIT_AS (`address_space_bytes`, by default the same; looser for runtimes that
      reserve address space they never write, like the JVM), RLIMIT_NPROC (per job: each job has its own
      user namespace), RLIMIT_NOFILE, RLIMIT_FSIZE, no core files; stdout+stderr capped at
      `output_bytes` (the job is killed past it); a wall-clock limit for programs that wait.
    * Clean-up: when the program exits, the job's pid-namespace init kills and reaps every
      process left (daemons, double forks) before it reports; a job killed for a limit is
      reported only once all its processes are gone. A worker that misbehaves is killed whole
      (bwrap is pid 1 of its namespace, `--die-with-parent`) and replaced. Workers are forked
      from one long-lived thread of the host process, so they do not die with the (possibly
      short-lived) thread that first used the pool (`--die-with-parent` follows the thread).
    * Between jobs: a job starts from a process that never held another job's data. The
      server forks jobs but never receives their source, stdin, calls or answers (they go
      host <-> the job's pid 1 directly), and reads their output into memory forked children
      do not inherit; so neither the frame stack, nor `gc`, nor /proc/self/mem of a job shows
      an earlier one. A program holds no descriptor but 0-2 (a session's module: also a private
      pipe pair to its guard), so it cannot write into, read from or set flags on the worker's
      channel. The guard forwards exactly one answer per call, numbered, at most
      `Limits.frame_bytes`, stamped with a fresh per-job nonce; the host checks all of it and
      decodes with bounded depth; anything else ends that job as `protocol`, never the next.
    * Memory the data and address-space limits do not see: memfd_create/memfd_secret, SysV shared
      memory and message queues are refused (seccomp), POSIX message queues get RLIMIT_MSGQUEUE
      0, and /tmp and /dev/shm are one tmpfs capped at `tmp_bytes` and `tmp_inodes` (every file costs kernel memory).
    * Between the runs of a batch: each run is a fresh process under its own limits (CPU, data,
      address space, stack, processes, files, output, wall); before the next, the job's init
      kills and reaps every process the run left and empties /tmp and /dev/shm, then writes
      the job's files again. Runs exec at once, so nothing of the init's memory reaches them;
      the init is pid 1 of the job's pid namespace, which no run can signal. Answers are
      checked on the host (nonce, number, exact fields and types, lengths); a job that ends
      without answering gives the run in flight a typed verdict, and the next run starts a
      fresh job.
    * Timeouts are enforced from outside the program (rlimits, the server's clock, the host's
      clock); never `signal.alarm`, so C-level loops are killed too.

What is not covered
    * The seccomp filter is a deny-list (like Docker's), not an allow-list, and is absent on
      other architectures: the rest of the kernel stays reachable, and a kernel exploit
      through it escapes.
    * No cgroups: CPU and memory limits are per process, so a job's process tree may use up to
      `processes` x the limits (plus `tmp_bytes`, and pipe and socket buffers bounded by the
      open-files limit) until the wall clock or the CPU rlimit stops it. cgroup v2 would count
      it all; it is not used (the host this was built on offers no cgroup v2 memory controller
      to delegate, so that path could not be tested).
    * What a job can learn of earlier ones is limited to facts the server keeps: limits, exit
      statuses and CPU times, and the timing of its own start.
    * Without seccomp (not x86_64) memfd and SysV shared memory are not refused.
    * Timing side channels and the speed of the host are visible to programs.
    * Without bubblewrap (`isolation="rlimits"`, or "auto" when `bwrap` is missing) only the
      rlimits, a clean environment, a private working directory and process-group clean-up
      apply: NOT a security boundary. A loud warning is logged and every result says
      `isolation="rlimits-only"`.
"""

from rewardlab.sandbox._wire import EncodeError
from rewardlab.sandbox.batch import Batch
from rewardlab.sandbox.config import Limits, SandboxConfig
from rewardlab.sandbox.pool import SandboxPool
from rewardlab.sandbox.result import ExecResult, Outcome, SandboxError
from rewardlab.sandbox.session import Session

__all__ = [
    "Batch",
    "EncodeError",
    "ExecResult",
    "Limits",
    "Outcome",
    "SandboxConfig",
    "SandboxError",
    "SandboxPool",
    "Session",
]
