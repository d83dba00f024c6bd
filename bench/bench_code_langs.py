"""Per-language throughput of `code.tests` (bubblewrap) vs a plain subprocess harness without
isolation, on the same tests in the same run; and C++ first-compile vs warm cost.

For each language one a+b solution and `--tests` stdin/stdout cases:

* rewardlab: `CodeTests(language=L, workers=W).score(sample)` with the build already cached
  (the compile is timed separately, below): every test is a fresh sandboxed job (namespaces,
  seccomp, rlimits, private tmpfs, the build copied in).
* plain: the same compile command once on the host in a temporary directory, then
  `subprocess.run(binary, input=case)` per test on W threads, output compared the same way
  (trailing blanks ignored). No isolation at all: the floor a sandbox can only approach.

Compile: the first compile of a source through `code.tests` (a sandbox job under compile
limits), the warm cost of the same source again (the build cache), and the same compiler run
plainly on the host, for C++ (`--compile-languages` for others).

Usage:
    .venv/bin/python bench/bench_code_langs.py [--tests 20] [--workers 1] [--languages c,cpp,...]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rewardlab.core import Sample
from rewardlab.verify.code import CodeTests, output_matches
from rewardlab.verify.code.languages import LANGUAGES, Language, run_env

SOLUTIONS = {
    "python": "a, b = map(int, input().split())\nprint(a + b)\n",
    "c": '#include <stdio.h>\nint main(void) { long a, b; if (scanf("%ld %ld", &a, &b) != 2) return 1; printf("%ld\\n", a + b); return 0; }\n',
    "cpp": "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n",
    "java": "import java.util.*;\npublic class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); "
            "long a = s.nextLong(), b = s.nextLong(); System.out.println(a + b); } }\n",
    "javascript": 'const [a, b] = require("fs").readFileSync(0, "utf8").trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n',
    "typescript": 'import * as fs from "fs";\nconst [a, b]: number[] = fs.readFileSync(0, "utf8").trim().split(/\\s+/).map(Number);\n'
                  "console.log(a + b);\n",
    "go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tvar a, b int64\n\tfmt.Scan(&a, &b)\n\tfmt.Println(a + b)\n}\n',
    "rust": "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); "
            "let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect(); println!(\"{}\", v[0] + v[1]); }\n",
}  # fmt: skip


def make_cases(n: int) -> list[dict[str, str]]:
    rng = random.Random(0)
    pairs = [(rng.randint(-10**9, 10**9), rng.randint(-10**9, 10**9)) for _ in range(n)]
    return [{"input": f"{a} {b}\n", "output": f"{a + b}\n"} for a, b in pairs]


def plain_compile(lang: Language, source: str, workdir: str) -> float:
    """The language's compile command on the host, in `workdir` (artifacts into workdir/out)."""
    with open(os.path.join(workdir, lang.source_name(source)), "w") as f:
        f.write(source)
    os.makedirs(os.path.join(workdir, "out"), exist_ok=True)
    start = time.perf_counter()
    if lang.compile:
        build = lang.compile.format(src=lang.source_name(source), mem=256)
        # the toolchains the sandbox uses (/usr), not e.g. a rustup rustc earlier on this PATH
        env = {**os.environ, **run_env(lang, 256), "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir}
        subprocess.run(["/bin/sh", "-c", build], cwd=workdir, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def plain_argv(lang: Language, source: str, workdir: str) -> list[str]:
    out = os.path.join(workdir, "out")
    if lang.compile is None:
        return [sys.executable, os.path.join(workdir, lang.source_name(source))]
    return [os.path.join(out, part) if part in ("./main", "main.js") else (out if part == "." else part) for part in lang.run_argv(source, 256)]


def plain_run(lang: Language, source: str, cases: list[dict[str, str]], workers: int, workdir: str) -> tuple[float, int]:
    argv = plain_argv(lang, source, workdir)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir, **run_env(lang, 256)}

    def one(case: dict[str, str]) -> bool:
        done = subprocess.run(argv, input=case["input"], capture_output=True, text=True, timeout=10, env=env)
        return done.returncode == 0 and output_matches(case["output"], done.stdout)

    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        passed = sum(pool.map(one, cases))
    return time.perf_counter() - start, passed


def sandboxed_run(reward: CodeTests, sample: Sample) -> tuple[float, int, Mapping[str, Any]]:
    start = time.perf_counter()
    result = reward.score(sample)
    return time.perf_counter() - start, int(result.info.get("passed", 0)), result.info


def bench_language(name: str, tests: int, workers: int) -> dict[str, Any]:
    lang = LANGUAGES[name]
    source, cases = SOLUTIONS[name], make_cases(tests)
    fence = f"```{name}\n{source}```"
    # One sample per worker, the cases split among them, so W sandboxes run at once as W threads do.
    chunks = [cases[i::workers] for i in range(workers)]
    reward = CodeTests(language=name, workers=workers, cpu_seconds=5.0, wall_seconds=30.0, memory_mb=256)
    samples = [Sample(response=fence, reference={"cases": chunk}) for chunk in chunks]
    reward.score(samples[0])  # builds once (cached), starts the pool
    start = time.perf_counter()
    results = reward.score_batch(samples)
    sandbox_seconds = time.perf_counter() - start
    sandbox_passed = sum(int(r.info.get("passed", 0)) for r in results)
    with tempfile.TemporaryDirectory(prefix="bench-langs-") as workdir:
        os.chmod(workdir, 0o755)
        plain_compile(lang, source, workdir)
        plain_seconds, plain_passed = plain_run(lang, source, cases, workers, workdir)
    return {"language": name, "tests": tests, "sandbox_s": sandbox_seconds, "sandbox_passed": sandbox_passed,
            "plain_s": plain_seconds, "plain_passed": plain_passed}  # fmt: skip


def bench_compile(name: str) -> dict[str, Any]:
    """First compile through code.tests (a fresh source: a comment with the time), the warm
    cost of scoring it again (cache hit), and the plain host compile of the same source."""
    lang = LANGUAGES[name]
    source = SOLUTIONS[name] + ("" if name == "python" else f"// {time.time_ns()}\n")
    reward = CodeTests(language=name, workers=1, cpu_seconds=5.0, wall_seconds=30.0, memory_mb=256)
    sample = Sample(response=f"```{name}\n{source}```", reference={"cases": make_cases(1)})
    reward.score(Sample(response=f"```{name}\n{SOLUTIONS[name]}```", reference={"cases": make_cases(1)}))  # pool up
    first_s, _, first = sandboxed_run(reward, sample)
    warm_s, _, warm = sandboxed_run(reward, sample)
    with tempfile.TemporaryDirectory(prefix="bench-langs-") as workdir:
        plain_s = plain_compile(lang, source, workdir)
    return {"language": name, "first_s": first_s, "first_compile_cpu": first["compile"]["cpu_seconds"],
            "warm_s": warm_s, "warm_cached": warm["compile"]["cached"], "plain_compile_s": plain_s}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=20)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--languages", default=",".join(SOLUTIONS))
    parser.add_argument("--compile-languages", default="cpp")
    args = parser.parse_args(argv)
    print(f"{'language':<11} {'tests':>5} {'sandbox tests/s':>16} {'plain tests/s':>14} {'ratio':>6}  passed (sandbox/plain)")
    for name in args.languages.split(","):
        row = bench_language(name, args.tests, args.workers)
        s_rate, p_rate = row["tests"] / row["sandbox_s"], row["tests"] / row["plain_s"]
        print(f"{name:<11} {row['tests']:>5} {s_rate:>16.1f} {p_rate:>14.1f} {p_rate / s_rate:>5.2f}x  "
              f"{row['sandbox_passed']}/{row['plain_passed']}", flush=True)  # fmt: skip
        if row["sandbox_passed"] != row["tests"] or row["plain_passed"] != row["tests"]:
            print(f"  DISAGREEMENT: {name} did not pass every test on both sides", file=sys.stderr)
            return 1
    print(f"\n{'compile':<11} {'first (sandbox)':>16} {'of it compiler CPU':>19} {'warm (cached)':>14} {'plain host compile':>19}")
    for name in args.compile_languages.split(","):
        row = bench_compile(name)
        print(f"{name:<11} {row['first_s']:>15.3f}s {row['first_compile_cpu']:>18.3f}s {row['warm_s']:>13.3f}s {row['plain_compile_s']:>18.3f}s"
              f"  (warm cached: {row['warm_cached']})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
