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

Usage:
    .venv/bin/python bench/bench_code_overhead.py [--tests 50] [--rounds 5] [--languages c,cpp,rust,go,java,python]
"""

from __future__ import annotations

import argparse
import os
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


def plain_round(argv: list[str], env: dict[str, str], workdir: str, cases: list[dict[str, str]]) -> tuple[float, int]:
    start = time.perf_counter()
    passed = 0
    for case in cases:
        done = subprocess.run(argv, input=case["input"], capture_output=True, text=True, timeout=30, env=env, cwd=workdir)
        passed += done.returncode == 0 and output_matches(case["output"], done.stdout)
    return time.perf_counter() - start, passed


def rewardlab_round(reward: CodeTests, sample: Sample) -> tuple[float, int]:
    start = time.perf_counter()
    result = reward.score(sample)
    return time.perf_counter() - start, int(result.info.get("passed", 0))


def bench_language(name: str, tests: int, rounds: int) -> dict[str, float]:
    lang, cases = LANGUAGES[name], make_cases(tests)
    reward = CodeTests(language=name, workers=1, cpu_seconds=5.0, wall_seconds=30.0, memory_mb=MEMORY_MB)
    sample = Sample(response=f"```{name}\n{SOLUTIONS[name]}```", reference={"cases": cases})
    rewardlab_round(reward, sample)  # builds once (cached), starts the pool
    sandboxed, plain = [], []
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as workdir:
        write_program(reward, name, workdir)
        argv = plain_argv(name, workdir)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir, "LANG": "C.UTF-8", **run_env(lang, MEMORY_MB)}
        plain_round(argv, env, workdir, cases[:1])  # page cache
        for _ in range(rounds):
            seconds, passed = rewardlab_round(reward, sample)
            if passed != tests:
                raise SystemExit(f"{name}: rewardlab passed {passed}/{tests}")
            sandboxed.append(seconds / tests)
            seconds, passed = plain_round(argv, env, workdir, cases)
            if passed != tests:
                raise SystemExit(f"{name}: the plain run passed {passed}/{tests}")
            plain.append(seconds / tests)
    return {"rewardlab": statistics.median(sandboxed), "plain": statistics.median(plain)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--languages", default="c,cpp,rust,go,java,python")
    args = parser.parse_args(argv)
    print(f"{'language':<11} {'tests':>5} {'rounds':>6} {'rewardlab ms/test':>18} {'plain ms/test':>14} {'overhead ms':>12} {'ratio':>6}")
    for name in args.languages.split(","):
        if not LANGUAGES[name].available():
            print(f"{name:<11} skipped: {LANGUAGES[name].package} is not installed")
            continue
        row = bench_language(name, args.tests, args.rounds)
        ours, floor = row["rewardlab"] * 1e3, row["plain"] * 1e3
        print(f"{name:<11} {args.tests:>5} {args.rounds:>6} {ours:>18.2f} {floor:>14.2f} {ours - floor:>12.2f} {ours / floor:>5.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
