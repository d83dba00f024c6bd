"""Maths answer checking: rewardlab vs verl's graders, run from the installed package (verl 0.9.1).

Peers (each called through its own `compute_score`, on a response in the format it reads):

- `hendrycks` — `verl.utils.reward_score.math_reward` (hendrycks MATH / lm-eval `is_equiv`: the last
  `\\boxed{}`, then string equality after `strip_string`);
- `prime_math` — `verl.utils.reward_score.prime_math` (PRM800K `grade_answer`, then the
  Qwen2.5-Math / ToRA `math_equal`: numbers within rel_tol 1e-4, also x100 and /100, sympy);
- `math_dapo` — `verl.utils.reward_score.math_dapo` (DAPO: the last `Answer: ...` line, Minerva's
  `normalize_final_answer`, then string equality; a `\\boxed{}` within the last 100 characters
  when there is no such line).

Workloads:
  (a) tests/verify/math/external/peer_rules.jsonl: answer pairs built from these graders' own
      normalisation rules (what each rule says is equal, and the wrong answer in the same shape);
      each answer is given to a peer as `\\boxed{answer}` (hendrycks, prime_math) or
      `Answer: answer` (math_dapo), to rewardlab as `\\boxed{answer}`;
  (b) tests/verify/math/external/cases.jsonl: Math-Verify 0.9.0's labelled cases, raw candidates;
  (c) the 800 real Qwen2.5-Math responses of ../shared/data/qwen25-math-cot-100.jsonl (raw), against
      the corrected labels of tests/verify/math/test_math_real_data.py.

Prints per workload and per tool: agreement with the labels, wrong accepts (label false, scored
correct), and how often each peer gives rewardlab's verdict.

Run:  PYTHONPATH=src .venv/bin/python bench/bench_math_peers.py [--only a]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXTERNAL = ROOT / "tests" / "verify" / "math" / "external"
REAL_TEST = ROOT / "tests" / "verify" / "math" / "test_math_real_data.py"
REAL_DATA = ROOT.parent / "shared" / "data" / "qwen25-math-cot-100.jsonl"

Grader = Callable[[str, str], bool]  # (gold answer, full response) -> accepted


def _quiet(fn: Callable[[], Any]) -> Any:
    """The peers print their parse errors; keep the report readable."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return fn()


def peers() -> dict[str, Grader]:
    """The peer graders, each `(gold, response) -> accepted` through its own `compute_score`."""
    from verl.utils.reward_score import math_dapo, math_reward, prime_math

    def hendrycks(gold: str, response: str) -> bool:
        return bool(_quiet(lambda: math_reward.compute_score(response, gold)) == 1.0)

    def prime(gold: str, response: str) -> bool:
        return bool(_quiet(lambda: prime_math.compute_score(response, gold))[0])

    def dapo(gold: str, response: str) -> bool:
        return bool(_quiet(lambda: math_dapo.compute_score(response, gold))["acc"])

    return {"hendrycks": hendrycks, "prime_math": prime, "math_dapo": dapo}


def peer_response(peer: str, answer: str) -> str:
    """`answer` written the way `peer` reads a final answer."""
    return f"Answer: {answer}" if peer == "math_dapo" else f"\\boxed{{{answer}}}"


def rewardlab_grader() -> Grader:
    from rewardlab.core import Sample
    from rewardlab.verify.math import MathAnswer

    reward = MathAnswer()
    return lambda gold, response: reward.score(Sample(prompt="", response=response, reference=gold)).score == 1.0


def rule_cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (EXTERNAL / "peer_rules.jsonl").read_text().splitlines() if line.strip()]


def run_rules() -> tuple[list[dict[str, Any]], dict[str, list[bool]]]:
    """Every rule case through rewardlab and each peer: (cases, verdicts per tool)."""
    cases = rule_cases()
    ours = rewardlab_grader()
    verdicts = {"rewardlab": [ours(c["reference"], f"\\boxed{{{c['candidate']}}}") for c in cases]}
    for name, grade in peers().items():
        verdicts[name] = [grade(c["reference"], peer_response(name, c["candidate"])) for c in cases]
    return cases, verdicts


def _external() -> list[tuple[str, str, bool]]:
    cases = [json.loads(line) for line in (EXTERNAL / "cases.jsonl").read_text().splitlines() if line.strip()]
    return [(c["reference"], c["candidate"], bool(c["expected"])) for c in cases if not c.get("disputed")]


def _real() -> list[tuple[str, str, bool]]:
    spec = importlib.util.spec_from_file_location("real_data_test", REAL_TEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    corrected: dict[tuple[int, int], bool] = module.CORRECTED
    out = []
    for line in REAL_DATA.read_text().splitlines():
        row = json.loads(line)
        for k, (response, label) in enumerate(zip(row["code"], row["score"], strict=True)):
            out.append((row["gt"], response, corrected.get((row["idx"], k), bool(label))))
    return out


def report(name: str, labels: list[bool], verdicts: dict[str, list[bool]]) -> None:
    n = len(labels)
    print(f"\n{name} (n={n})")
    print(f"{'tool':12} {'agree':>11} {'wrong acc':>9} {'same as rewardlab':>18}")
    ours = verdicts["rewardlab"]
    for tool, got in verdicts.items():
        agree = sum(g == label for g, label in zip(got, labels, strict=True))
        wrong = sum(g and not label for g, label in zip(got, labels, strict=True))
        same = sum(g == o for g, o in zip(got, ours, strict=True))
        print(f"{tool:12} {agree:>5}/{n:<5} {wrong:>9} {same:>11}/{n:<6}")


def _raw(items: list[tuple[str, str, bool]]) -> dict[str, list[bool]]:
    ours = rewardlab_grader()
    verdicts = {"rewardlab": [ours(gold, response) for gold, response, _ in items]}
    for name, grade in peers().items():
        verdicts[name] = [grade(gold, response) for gold, response, _ in items]
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["a", "b", "c"], help="one workload")
    args = parser.parse_args()
    if args.only in (None, "a"):
        cases, verdicts = run_rules()
        report("(a) peer rules (tests/verify/math/external/peer_rules.jsonl)", [bool(c["expected"]) for c in cases], verdicts)
    if args.only in (None, "b"):
        items = _external()
        report("(b) Math-Verify 0.9.0 labelled cases, raw candidates", [label for *_, label in items], _raw(items))
    if args.only in (None, "c"):
        if not REAL_DATA.is_file():
            sys.exit(f"{REAL_DATA} is absent: workload (c) needs it")
        items = _real()
        report("(c) 800 real Qwen2.5-Math responses, corrected labels", [label for *_, label in items], _raw(items))


if __name__ == "__main__":
    main()
