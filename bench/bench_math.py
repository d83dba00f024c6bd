"""Maths answer verification: rewardlab (`math.answer` pieces) vs Math-Verify, same inputs, same run.

Workloads:
  (a) the 800 real Qwen2.5-Math responses in ../shared/data/qwen25-math-cot-100.jsonl, end to end
      (extraction from the full response + verification against the gold answer);
  (b) synthetic categories, 200 distinct items each, half equivalent: boxed integers, LaTeX
      fractions, radicals, polynomial identities, intervals.

Fairness: both run in this process, alternating, best of `--repeat` passes. rewardlab runs with
its verdict cache OFF (a fresh `SympyPool` per pass, started before timing just as Math-Verify's
import is done before timing); Math-Verify caches nothing either. Math-Verify uses its defaults
(`parse("$" + gold + "$")`, `parse(response)`, `verify(gold, pred)`, 5 s signal.alarm timeout, main thread).

Memory: each tool runs workload (a)+(b) in its own fresh subprocess (`--memory-child`), which
reports `ru_maxrss` of itself and (rewardlab) of its sympy worker after the worker exits.

External labelled cases (`--external`): tests/verify/math/external/cases.jsonl, public graders'
own labelled tests (Math-Verify 0.9.0). Each tool scores every case
once in its own fresh subprocess (cold caches: no verdict cache, no parse cache, a new sympy
worker), rewardlab through `MathAnswer().score` (the real reward, one sympy worker, so one core
at a time) and Math-Verify through its default calls `verify(parse(gold), parse(pred))`. Prints,
per source file, agreement with the labels and wrong accepts (label 0, scored correct), and the
throughput ratio. Disputed labels are counted apart.

Run:  .venv/bin/python bench/bench_math.py [--repeat 3] [--only '(a)'] [--no-memory]
      .venv/bin/python bench/bench_math.py --external
      .venv/bin/python bench/bench_math.py --external --cases graders   (the failure-class tables)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "qwen25-math-cot-100.jsonl"
EXTERNAL = ROOT / "tests" / "verify" / "math" / "external" / "cases.jsonl"

Item = tuple[str, str]  # (gold answer, full response)


def real_items() -> list[Item]:
    items = []
    for line in DATA.read_text().splitlines():
        row = json.loads(line)
        items.extend((row["gt"], response) for response in row["code"])
    return items


def _box(answer: str) -> str:
    return f"Let me work this out step by step. ... Therefore the answer is $\\boxed{{{answer}}}$."


def categories(n: int = 200) -> dict[str, list[Item]]:
    rng = random.Random(0)
    cats: dict[str, list[Item]] = {k: [] for k in ("boxed integers", "LaTeX fractions", "radicals", "polynomial identities", "intervals")}
    for i in range(n):
        same = i % 2 == 0
        v = rng.randint(1, 10**6)
        cats["boxed integers"].append((str(v), _box(str(v if same else v + 1))))
        a, b, k = rng.randint(1, 99), rng.randint(100, 999), rng.randint(2, 9)
        cats["LaTeX fractions"].append((f"\\frac{{{a}}}{{{b}}}", _box(f"\\frac{{{a * k}}}{{{b * k + (0 if same else 1)}}}")))
        m = rng.choice([2, 3, 5, 6, 7, 10, 11, 13, 14, 15])
        c = rng.randint(2, 30)
        cats["radicals"].append((f"{c}\\sqrt{{{m}}}", _box(f"\\sqrt{{{c * c * m + (0 if same else 1)}}}")))
        p, q = rng.randint(1, 50), rng.randint(1, 50)
        cats["polynomial identities"].append(
            (f"x^2+{p + q}x+{p * q}", _box(f"(x+{p})(x+{q + (0 if same else 1)})"))
        )
        lo, hi = rng.randint(-500, 0), rng.randint(1, 500)
        right = "\\infty)" if i % 3 == 0 else f"{hi}]"
        cand_left = "[" if same else "("
        cats["intervals"].append((f"[{lo},{right}", _box(f"{cand_left}{lo}, {right}")))
    return cats


def rewardlab_runner() -> tuple[Callable[[list[Item]], list[bool]], Callable[[], None]]:
    from rewardlab.verify.math import (
        CheckOptions,
        Hedge,
        SympyPool,
        check,
        extract_answer,
        final_answer,
    )

    state: dict[str, SympyPool] = {}
    opts = CheckOptions()

    def fresh() -> None:  # a new pool per pass: no verdict cache, empty sympy parse cache
        if "pool" in state:
            state["pool"].close()
        state["pool"] = SympyPool(max_workers=1)
        state["pool"].warm_up()

    def run(items: list[Item]) -> list[bool]:
        pool = state["pool"]
        out = []
        for gold, response in items:  # what `math.answer` does: extract, resolve hedges, check
            answer = final_answer(extract_answer(response), gold, opts, pool=pool)
            ok = answer is not None and not isinstance(answer, Hedge) and check(gold, answer, opts, pool=pool).equivalent
            out.append(ok)
        return out

    return run, fresh


def math_verify_runner() -> tuple[Callable[[list[Item]], list[bool]], Callable[[], None]]:
    from math_verify import parse, verify

    def run(items: list[Item]) -> list[bool]:
        return [bool(verify(parse("$" + gold + "$"), parse(response))) for gold, response in items]

    return run, lambda: None


def _time(run: Callable[[list[Item]], list[bool]], prepare: Callable[[], None], items: list[Item]) -> tuple[float, list[bool]]:
    prepare()
    started = time.perf_counter()
    out = run(items)
    return time.perf_counter() - started, out


def memory_child(tool: str) -> None:
    items = real_items() + [it for cat in categories().values() for it in cat]
    run, prepare = rewardlab_runner() if tool == "rewardlab" else math_verify_runner()
    prepare()
    run(items)
    if tool == "rewardlab":
        from rewardlab.verify.math.worker import _close_all

        _close_all()  # waits for the worker, so RUSAGE_CHILDREN covers it
    self_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"self_mb": self_mb, "worker_mb": child_mb}))


def _memory(tool: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--memory-child", tool], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


GRADERS = ROOT / "tests" / "verify" / "math" / "test_math_grader_suites.py"
GRADER_TABLES = ("EXPRESSION_EQUALS_VALUE", "PROSE_AFTER_ANSWER", "THINK_BLOCK", "CHAT_TOKENS", "IMAGINARY_UNIT", "OPTIONS_LISTS_WORDS_UNITS")


def external_cases(which: str = "external") -> list[dict[str, object]]:
    """The labelled cases: Math-Verify's (`external`), or the failure-class tables built from
    other graders' suites (`graders`, tests/verify/math/test_math_grader_suites.py), one source
    per table."""
    if which == "external":
        return [json.loads(line) for line in EXTERNAL.read_text().splitlines() if line.strip()]
    spec = importlib.util.spec_from_file_location("grader_suites", GRADERS)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return [
        # the gold in `$...$`, as Math-Verify's own tests write it (its default parse needs the delimiters)
        {"reference": f"${ref}$", "candidate": resp, "expected": label, "source": {"repo": "graders", "path": name.lower()}}
        for name in GRADER_TABLES
        for resp, ref, label in getattr(module, name)
    ]


def external_child(tool: str, which: str = "external") -> None:
    """Score every external case once, cold, and print the verdicts and the seconds taken."""
    cases = external_cases(which)
    if tool == "rewardlab":
        from rewardlab.core import Sample
        from rewardlab.verify.math import MathAnswer, warm_up

        warm_up()  # the worker's start is paid before timing, as Math-Verify's import is
        reward = MathAnswer()

        def accept(gold: str, pred: str) -> bool:
            return reward.score(Sample(prompt="", response=pred, reference=gold)).score == 1.0
    else:
        from math_verify import parse, verify

        def accept(gold: str, pred: str) -> bool:
            return bool(verify(parse(gold), parse(pred)))

    started = time.perf_counter()
    verdicts = [accept(str(case["reference"]), str(case["candidate"])) for case in cases]
    print(json.dumps({"seconds": time.perf_counter() - started, "verdicts": verdicts}))


def _external_run(tool: str, which: str) -> dict[str, object]:
    env = {**os.environ, "REWARDLAB_MATH_WORKERS": "1"}
    command = [sys.executable, __file__, "--external-child", tool, "--cases", which]
    out = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def external_main(repeat: int, which: str = "external") -> None:
    cases = external_cases(which)
    runs: dict[str, list[dict[str, object]]] = {"rewardlab": [], "math-verify": []}
    for _ in range(repeat):  # alternating, best time of `repeat` cold runs
        for tool in runs:
            runs[tool].append(_external_run(tool, which))
    verdicts = {tool: runs[tool][0]["verdicts"] for tool in runs}
    seconds = {tool: min(float(run["seconds"]) for run in runs[tool]) for tool in runs}  # type: ignore[arg-type]
    groups: dict[str, list[int]] = {}
    for i, case in enumerate(cases):
        source = case["source"]
        groups.setdefault(f"{source['repo'].split(' ')[0]}:{source['path']}", []).append(i)  # type: ignore[index]
    groups["all"] = list(range(len(cases)))
    print(f"{'source':58} {'n':>4} {'disp':>4}  {'rewardlab agree':>15} {'wrong acc':>9}  {'math-verify agree':>17} {'wrong acc':>9}")
    for name, idx in groups.items():
        kept = [i for i in idx if not cases[i].get("disputed")]
        row = f"{name:58} {len(kept):>4} {len(idx) - len(kept):>4}"
        for tool in runs:
            got = verdicts[tool]
            agree = sum(got[i] == cases[i]["expected"] for i in kept)  # type: ignore[index]
            wrong = sum(got[i] and not cases[i]["expected"] for i in kept)  # type: ignore[index]
            row += f"  {agree:>9}/{len(kept):<5} {wrong:>9}"
        print(row)
    disputed = [i for i, case in enumerate(cases) if case.get("disputed")]
    row = f"{'disputed labels: agree with the corrected label':58} {len(disputed):>4} {'':>4}"
    for tool in runs:
        agree = sum(verdicts[tool][i] != cases[i]["expected"] for i in disputed)  # type: ignore[index]
        row += f"  {agree:>9}/{len(disputed):<5} {'':>9}"
    print(row)
    rate = {tool: len(cases) / seconds[tool] for tool in runs}
    print(
        f"cold first pass, one core each: rewardlab {rate['rewardlab']:.0f} cases/s, math-verify "
        f"{rate['math-verify']:.0f} cases/s, ratio {rate['rewardlab'] / rate['math-verify']:.1f}x (best of {repeat})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memory-child", choices=["rewardlab", "math-verify"])
    parser.add_argument("--only", help="run only the workloads whose name starts with this, e.g. '(a)'")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-RSS subprocesses")
    parser.add_argument("--external", action="store_true", help="the external labelled cases, per source")
    parser.add_argument("--external-child", choices=["rewardlab", "math-verify"])
    parser.add_argument(
        "--cases", choices=["external", "graders"], default="external",
        help="with --external: Math-Verify's labelled tests, or the failure-class tables from other graders' suites",
    )
    args = parser.parse_args()
    if args.external_child:
        external_child(args.external_child, args.cases)
        return
    if args.external:
        external_main(args.repeat, args.cases)
        return
    if args.memory_child:
        memory_child(args.memory_child)
        return
    if not DATA.is_file():
        sys.exit(f"{DATA} is absent: the real-data workload needs it")
    workloads = {"(a) 800 real responses": real_items(), **{f"(b) {k}": v for k, v in categories().items()}}
    if args.only:
        workloads = {k: v for k, v in workloads.items() if k.startswith(args.only)}
    ours, ours_prep = rewardlab_runner()
    theirs, theirs_prep = math_verify_runner()
    print(f"{'workload':32} {'n':>5} {'rewardlab/s':>12} {'math-verify/s':>14} {'ratio':>7}  agree")
    for name, items in workloads.items():
        best_ours = best_theirs = float("inf")
        for _ in range(args.repeat):
            t, ours_out = _time(ours, ours_prep, items)
            best_ours = min(best_ours, t)
            t, theirs_out = _time(theirs, theirs_prep, items)
            best_theirs = min(best_theirs, t)
        agree = sum(a == b for a, b in zip(ours_out, theirs_out, strict=True))
        r_ours, r_theirs = len(items) / best_ours, len(items) / best_theirs
        print(f"{name:32} {len(items):>5} {r_ours:>12.0f} {r_theirs:>14.0f} {r_ours / r_theirs:>6.1f}x  {agree}/{len(items)}")
    if args.no_memory:
        return
    mem_ours, mem_theirs = _memory("rewardlab"), _memory("math-verify")
    print(
        f"peak RSS: rewardlab main {mem_ours['self_mb']:.0f} MB + sympy worker {mem_ours['worker_mb']:.0f} MB; "
        f"math-verify {mem_theirs['self_mb']:.0f} MB; worker / math-verify = "
        f"{mem_ours['worker_mb'] / mem_theirs['self_mb']:.2f}, main / math-verify = {mem_ours['self_mb'] / mem_theirs['self_mb']:.2f}"
    )


if __name__ == "__main__":
    main()
