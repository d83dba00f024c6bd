"""Format + exact match + length penalty through rewardlab's TRL adapter vs TRL's own rewards.

Both sides score the same 10,000 synthetic GRPO completions (chat format, with token ids), in
batches of the size GRPOTrainer hands to reward functions, in the same run, interleaved
round by round so machine load hits both alike:

* rewardlab: one spec (`format.tags` + `text.exact` on the boxed answer + DAPO
  `shaping.soft_overlong`) through `as_trl_reward`, which also logs per-component metrics.
* TRL (a): its built-in equivalents from `trl.rewards`: `think_format_reward`,
  `accuracy_reward` (TRL's only correctness reward: Math-Verify parsing) and
  `get_soft_overlong_punishment`, called as GRPOTrainer calls them, summed with the same weights.
* TRL (b): `think_format_reward` + `get_soft_overlong_punishment` + a one-line exact-match
  function (what a TRL user writes by hand when the answer is a plain string), because (a)'s
  symbolic maths is more work than an exact match and would flatter rewardlab.

Also checks that the DAPO overlong term agrees exactly with TRL's on every row.

Usage:
    .venv/bin/python bench/bench_trl.py [--rows 10000] [--batch 64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time
from collections.abc import Callable
from typing import Any

from trl.rewards import accuracy_reward, get_soft_overlong_punishment, think_format_reward

from rewardlab.integrations.trl import as_trl_reward

MAX_LEN, CACHE = 512, 100
WEIGHTS = {"format": 0.2, "exact": 1.0, "length": 1.0}
SPEC = f"""
[reward]
name = "bench"

[[reward.components]]
name = "format"
use = "format.tags"
weight = {WEIGHTS["format"]}
params = {{ tags = ["think", "answer"] }}

[[reward.components]]
name = "exact"
use = "text.exact"
weight = {WEIGHTS["exact"]}
params = {{ extract = '\\\\boxed\\{{([^}}]*)\\}}' }}

[[reward.components]]
name = "length"
use = "shaping.soft_overlong"
weight = {WEIGHTS["length"]}
params = {{ max_length = {MAX_LEN}, cache = {CACHE} }}
"""


def make_rows(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """GRPO-like rows: well-formed or not, right or wrong boxed answers, 20-700 tokens."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        gold = str(rng.randint(0, 999))
        answer = gold if rng.random() < 0.5 else str(rng.randint(0, 999))
        words = " ".join(rng.choice(["so", "then", "we", "add", "carry", "check", "the", "sum"]) for _ in range(rng.randint(5, 60)))
        style = rng.random()
        if style < 0.6:
            text = f"<think>{words}</think><answer>The answer is \\boxed{{{answer}}}</answer>"
        elif style < 0.8:
            text = f"<think>{words}</think> The answer is \\boxed{{{answer}}}"
        else:
            text = f"{words} so \\boxed{{{answer}}}"
        rows.append({
            "prompt": [{"role": "user", "content": f"Problem {i}: add the numbers."}],
            "completion": [{"role": "assistant", "content": text}],
            "completion_ids": [rng.randint(3, 30000) for _ in range(rng.randint(20, 700))],
            "solution": gold,
        })  # fmt: skip
    return rows


def batches(rows: list[dict[str, Any]], size: int) -> list[dict[str, list[Any]]]:
    out = []
    for start in range(0, len(rows), size):
        chunk = rows[start : start + size]
        out.append({key: [r[key] for r in chunk] for key in chunk[0]})
    return out


def exact_match_reward(completions: list[list[dict[str, str]]], solution: list[str], **kwargs: Any) -> list[float]:
    """The hand-written exact match a TRL user would add (TRL (b))."""
    out = []
    for completion, gold in zip(completions, solution, strict=True):
        found = re.findall(r"\\boxed\{([^}]*)\}", completion[0]["content"])
        out.append(float(bool(found) and found[-1].strip() == gold.strip()))
    return out


def trl_total(funcs: list[tuple[Callable[..., list[Any]], float]], batch: dict[str, list[Any]]) -> list[float]:
    """Call TRL reward functions as GRPOTrainer._calculate_rewards does and sum them weighted."""
    totals = [0.0] * len(batch["completion"])
    for fn, weight in funcs:
        values = fn(prompts=batch["prompt"], completions=batch["completion"], completion_ids=batch["completion_ids"], solution=batch["solution"])
        totals = [t + weight * (v if v is not None else 0.0) for t, v in zip(totals, values, strict=True)]
    return totals


def run_rewardlab(reward: Any, all_batches: list[dict[str, list[Any]]], metrics: dict[str, list[float]]) -> list[float | None]:
    out: list[float | None] = []
    for batch in all_batches:
        out.extend(reward(
            prompts=batch["prompt"], completions=batch["completion"], completion_ids=batch["completion_ids"],
            solution=batch["solution"], log_metric=lambda k, v: metrics.setdefault(k, []).append(v),
        ))  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    rows = make_rows(args.rows)
    all_batches = batches(rows, args.batch)
    reward = as_trl_reward(SPEC)
    overlong = get_soft_overlong_punishment(max_completion_len=MAX_LEN, soft_punish_cache=CACHE)
    trl_a = [(think_format_reward, WEIGHTS["format"]), (accuracy_reward, WEIGHTS["exact"]), (overlong, WEIGHTS["length"])]
    trl_b = [(think_format_reward, WEIGHTS["format"]), (exact_match_reward, WEIGHTS["exact"]), (overlong, WEIGHTS["length"])]

    timings: dict[str, list[float]] = {"rewardlab": [], "trl_a": [], "trl_b": []}
    outputs: dict[str, list[Any]] = {}
    for _ in range(args.rounds):
        for name in ("rewardlab", "trl_b", "trl_a"):
            start = time.perf_counter()
            if name == "rewardlab":
                metrics: dict[str, list[float]] = {}
                outputs[name] = run_rewardlab(reward, all_batches, metrics)
            else:
                funcs = trl_a if name == "trl_a" else trl_b
                outputs[name] = [v for b in all_batches for v in trl_total(funcs, b)]
            timings[name].append(time.perf_counter() - start)

    # The DAPO overlong term is the same function on both sides: it must agree row by row.
    trl_overlong = [v for b in all_batches for v in overlong(completion_ids=b["completion_ids"])]
    ours = [r.components["length"].score for b in all_batches for r in _score(reward, b)]
    mismatches = sum(abs(a - b) > 1e-9 for a, b in zip(trl_overlong, ours, strict=True))
    errors = sum(v is None for v in outputs["rewardlab"])

    best = {k: min(v) for k, v in timings.items()}
    print(f"rows={args.rows} batch={args.batch} rounds={args.rounds} (best of rounds, seconds)")
    for name, label in [("rewardlab", "rewardlab spec via as_trl_reward"), ("trl_b", "TRL built-ins + hand exact match"), ("trl_a", "TRL built-ins (accuracy_reward)")]:
        rate = args.rows / best[name]
        print(f"  {label:<36} {best[name]:8.3f} s  {rate:10.0f} rows/s  (median {statistics.median(timings[name]):.3f} s)")
    print(f"  ratio TRL(b) / rewardlab = {best['trl_b'] / best['rewardlab']:.2f}x   (>1: rewardlab faster)")
    print(f"  ratio TRL(a) / rewardlab = {best['trl_a'] / best['rewardlab']:.2f}x")
    print(f"  overlong term mismatches vs TRL: {mismatches} / {args.rows}; rewardlab error rows: {errors}")
    print(f"  mean total: rewardlab {statistics.fmean(v for v in outputs['rewardlab'] if v is not None):.4f}  TRL(b) {statistics.fmean(outputs['trl_b']):.4f}  TRL(a) {statistics.fmean(outputs['trl_a']):.4f}")


def _score(reward: Any, batch: dict[str, list[Any]]) -> list[Any]:
    reward(prompts=batch["prompt"], completions=batch["completion"], completion_ids=batch["completion_ids"], solution=batch["solution"])
    return list(reward.last_results)


if __name__ == "__main__":
    main()
