"""Per-test overhead of `code.tests` (bubblewrap, every isolation on) against a plain
`subprocess.run` of the same binary or interpreter, per language, in alternating rounds.

For each language: one a+b solution (from `bench_code_langs.py`) and `--tests` stdin/stdout
cases.

* rewardlab: `CodeTests(language=L, workers=1).score(sample)` with the build already cached,
  so a round is the tests alone: a built program's tests run as one batch (one job sandbox, a
  fresh process per test under its own limits), Python's as one job each.
* plain: the SAME build (the artifacts the sandbox compiled, written to a host directory) or
  the same interpreter (`/usr/bin/python3 main.py`), `subprocess.run` per test with the same
  environment, output compared the same way. No isolation: the floor.

Rounds alternate (rewardlab, plain, rewardlab, ...) so machine load hits both alike; the
per-test time of each side is the median over rounds, and the ratio is rewardlab / plain.
CPU time per test is printed too (this process, plus the plain children, or plus every process
of the sandbox workers, read from /proc): on a loaded machine the wall time of the sandbox's
chain of processes (host -> job init -> test) pays a scheduling wait at each hand-over, which
the CPU time does not.

Usage:
    .venv/bin/python bench/bench_code_overhead.py [--tests 50] [--rounds 5] [--languages c,cpp,rust,go,java,python]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from bench_code_langs import SOLUTIONS, make_cases

from rewardlab.core import Sample
from rewardlab.sandbox import SandboxConfig
from rewardlab.verify.code import CodeTests, output_matches
from rewardlab.verify.code.compile import compile_program
from rewardlab.verify.code.languages import LANGUAGES, run_env

MEMORY_MB = 256


def plain_argv(name: str, workdir: str) -> list[str]:
    """The command that runs the same program on the host, in `workdir` (which holds it)."""
    lang, source = LANGUAGES[name], SOLUTIONS[name]
    if lang.compile is None:
        return [SandboxConfig().interpreter(), os.path.join(workdir, lang.source_name(source))]
    return [os.path.join(workdir, "main") if part == "./main" else part for part in lang.run_argv(source, MEMORY_MB)]


def write_program(reward: CodeTests, name: str, workdir: str) -> None:
    """The sandbox's own build (from its cache) or the source, into `workdir`."""
    lang, source = LANGUAGES[name], SOLUTIONS[name]
    if lang.compile is None:
        with open(os.path.join(workdir, lang.source_name(source)), "w") as f:
            f.write(source)
        return
    build = compile_program(reward.pool, lang, source, memory_mb=MEMORY_MB, cache=reward.builds)
    assert build.ok, build.message
    for artifact, data in build.artifacts.items():
        path = os.path.join(workdir, artifact)
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, 0o755)


_TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(root: int) -> float:
    """CPU seconds of `root`'s live process tree, including every child it has reaped
    (/proc/<pid>/stat utime, stime, cutime, cstime; a live child is in no parent's c*time)."""
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                todo += [int(child) for child in f.read().split()]
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15]) / _TICK
    return total


def sandbox_cpu(reward: CodeTests) -> float:
    """CPU seconds so far of every process of the reward's sandbox workers."""
    workers = [*reward.pool._idle.queue]  # idle between rounds: every worker is there
    return sum(tree_cpu(worker.proc.pid) for worker in workers)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def plain_round(argv: list[str], env: dict[str, str], workdir: str, cases: list[dict[str, str]]) -> tuple[float, float, int]:
    start, cpu = time.perf_counter(), time.process_time() + children_cpu()
    passed = 0
    for case in cases:
        done = subprocess.run(argv, input=case["input"], capture_output=True, text=True, timeout=30, env=env, cwd=workdir)
        passed += done.returncode == 0 and output_matches(case["output"], done.stdout)
    return time.perf_counter() - start, time.process_time() + children_cpu() - cpu, passed


def rewardlab_round(reward: CodeTests, sample: Sample) -> tuple[float, float, int]:
    start, cpu = time.perf_counter(), time.process_time() + sandbox_cpu(reward)
    result = reward.score(sample)
    return time.perf_counter() - start, time.process_time() + sandbox_cpu(reward) - cpu, int(result.info.get("passed", 0))


def bench_language(name: str, tests: int, rounds: int) -> dict[str, float]:
    lang, cases = LANGUAGES[name], make_cases(tests)
    reward = CodeTests(language=name, workers=1, cpu_seconds=5.0, wall_seconds=30.0, memory_mb=MEMORY_MB)
    sample = Sample(response=f"```{name}\n{SOLUTIONS[name]}```", reference={"cases": cases})
    rewardlab_round(reward, sample)  # builds once (cached), starts the pool
    times: dict[str, list[float]] = {"rewardlab": [], "plain": [], "rewardlab_cpu": [], "plain_cpu": []}
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as workdir:
        write_program(reward, name, workdir)
        argv = plain_argv(name, workdir)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir, "LANG": "C.UTF-8", **run_env(lang, MEMORY_MB)}
        plain_round(argv, env, workdir, cases[:1])  # page cache
        for _ in range(rounds):
            for side, (seconds, cpu, passed) in (("rewardlab", rewardlab_round(reward, sample)),
                                                 ("plain", plain_round(argv, env, workdir, cases))):  # fmt: skip
                if passed != tests:
                    raise SystemExit(f"{name}: {side} passed {passed}/{tests}")
                times[side].append(seconds / tests)
                times[f"{side}_cpu"].append(cpu / tests)
    return {key: statistics.median(values) for key, values in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--languages", default="c,cpp,rust,go,java,python")
    args = parser.parse_args(argv)
    print(f"{'language':<11} {'tests':>5} {'rounds':>6} {'rewardlab ms/test':>18} {'plain ms/test':>14} {'ratio':>6}"
          f" {'rewardlab CPU ms/test':>22} {'plain CPU ms/test':>18} {'CPU ratio':>9}")  # fmt: skip
    for name in args.languages.split(","):
        if not LANGUAGES[name].available():
            print(f"{name:<11} skipped: {LANGUAGES[name].package} is not installed")
            continue
        row = {key: value * 1e3 for key, value in bench_language(name, args.tests, args.rounds).items()}
        print(f"{name:<11} {args.tests:>5} {args.rounds:>6} {row['rewardlab']:>18.2f} {row['plain']:>14.2f} "
              f"{row['rewardlab'] / row['plain']:>5.2f}x {row['rewardlab_cpu']:>22.2f} {row['plain_cpu']:>18.2f} "
              f"{row['rewardlab_cpu'] / max(row['plain_cpu'], 1e-9):>8.2f}x", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
