"""Benchmark-shaped evaluations beyond plain pairs: best-of-k (RewardBench 2), the style grid
(RM-Bench) and first-error detection for process rewards (ProcessBench / PRMBench-style F1).

Row shapes (JSONL/Parquet; column names follow the benchmarks' releases):

- best-of-k: `prompt`, `chosen` (a string or a one-item list), `rejected` (a list), `subset`;
- RM-Bench: `prompt`, `chosen` and `rejected` as lists of three responses in the styles
  concise, detailed plain, detailed markdown; `domain` (or `subset`);
- process: `problem`, `steps` (list of strings), `label` (index of the first wrong step, −1 when
  all are right), `subset`. The reward must return per-step scores (`RewardResult.steps`);
- judge: saved verdicts of a pairwise judge in both orders, `verdict_ab`, `verdict_ba`, and
  optionally `label` and `subset` (no reward is run).

A reward error on any response of an item drops the item; drops are counted by kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from rewardlab.core import Reward, RewardResult, Sample
from rewardlab.errors import InputError
from rewardlab.evaluate import pairwise, prm_metrics, stats
from rewardlab.evaluate._scoring import error_counts, scorer
from rewardlab.evaluate.audit import report as rp
from rewardlab.evaluate.datasets import read_rows

__all__ = ["evaluate_bestofk", "evaluate_judge", "evaluate_process", "evaluate_rmbench"]

Outcome = tuple[list[tuple[str, str]], list[rp.Section], dict[str, Any]]


def _texts(value: Any, column: str, source: str, line: int, n: int | None = None) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(t, str) for t in items):
        raise InputError(f"column {column!r} must be a string or a list of strings", source=source, line=line)
    if n is not None and len(items) != n:
        raise InputError(f"column {column!r} must hold {n} responses, got {len(items)}", source=source, line=line)
    return items


def _score_groups(reward: Reward, groups: list[list[Sample]], workers: int, timeout: float | None) -> tuple[list[list[RewardResult]], dict[str, int]]:
    flat = [s for g in groups for s in g]
    with scorer(reward, workers=workers, timeout=timeout) as score:
        results = score(flat)
    out, start = [], 0
    for g in groups:
        out.append(results[start:start + len(g)])
        start += len(g)
    return out, error_counts(results)


def _complete(results: list[list[RewardResult]]) -> list[int]:
    return [i for i, rs in enumerate(results) if all(r.score is not None for r in rs)]


def evaluate_bestofk(path: str | Path, reward: Reward, *, seed: int = 0, workers: int = 0, timeout: float | None = None) -> Outcome:
    """RewardBench-2 best-of-k accuracy (ties 1/t) per subset, with the length baseline."""
    source = str(path)
    groups, subsets = [], []
    for line, row in read_rows(path):
        chosen = _texts(row.get("chosen"), "chosen", source, line)
        if len(chosen) != 1:
            raise InputError("best-of-k needs exactly one chosen response per row", source=source, line=line)
        rejected = _texts(row.get("rejected"), "rejected", source, line)
        prompt = row.get("prompt", "")
        groups.append([Sample(prompt=prompt, response=t, meta={"line": line}) for t in chosen + rejected])
        subsets.append(str(row.get("subset", "all")))
    results, errors = _score_groups(reward, groups, workers, timeout)
    keep = _complete(results)
    if not keep:
        raise InputError(f"no item could be scored; errors: {errors}", source=source)
    by_subset: dict[str, dict[str, Any]] = {}
    for name in sorted({subsets[i] for i in keep}):
        idx = [i for i in keep if subsets[i] == name]
        k = {len(groups[i]) for i in idx}
        if len(k) != 1:
            raise InputError(f"subset {name!r} mixes items with {sorted(k)} responses", source=source)
        scores = np.asarray([[r.score for r in results[i]] for i in idx], dtype=float)
        lengths = np.asarray([[len(s.response_text) for s in groups[i]] for i in idx], dtype=float)
        credit = pairwise.best_of_k_outcomes(scores[:, 0], scores[:, 1:])
        by_subset[name] = {"accuracy": stats.bootstrap_ci(credit, seed=seed), "k": k.pop(),
                           "length_baseline": pairwise.best_of_k_accuracy(lengths[:, 0], lengths[:, 1:])}
    overall = float(np.mean([v["accuracy"].estimate for v in by_subset.values()]))
    numbers = {"items": len(groups), "scored_items": len(keep), "errors": errors, "subsets": by_subset,
               "score": overall}
    summary = [("items scored", f"{len(keep)}/{len(groups)}"), ("errors", str(errors or "none")),
               ("best-of-k accuracy (mean of subsets)", f"{overall:.4f}")]
    rows = [[s, str(v["accuracy"]), v["k"], v["accuracy"].n, f"{v['length_baseline']:.4f}"] for s, v in by_subset.items()]
    section = rp.Section("Best-of-k accuracy (RewardBench 2)", text="1 when the correct response scores strictly highest, 1/t on a t-way tie at the top.",
                         columns=["subset", "accuracy [95% CI]", "k", "items", "length baseline"], rows=rows)
    return summary, [section], numbers


def evaluate_rmbench(path: str | Path, reward: Reward, *, workers: int = 0, timeout: float | None = None) -> Outcome:
    """RM-Bench easy/normal/hard accuracies per domain, and the same grid for response length."""
    source = str(path)
    groups, domains = [], []
    for line, row in read_rows(path):
        chosen = _texts(row.get("chosen"), "chosen", source, line, 3)
        rejected = _texts(row.get("rejected"), "rejected", source, line, 3)
        prompt = row.get("prompt", "")
        groups.append([Sample(prompt=prompt, response=t, meta={"line": line}) for t in chosen + rejected])
        domains.append(str(row.get("domain", row.get("subset", "all"))))
    results, errors = _score_groups(reward, groups, workers, timeout)
    keep = _complete(results)
    if not keep:
        raise InputError(f"no item could be scored; errors: {errors}", source=source)
    grids: dict[str, dict[str, Any]] = {}
    for name in [*sorted({domains[i] for i in keep}), "all"]:
        idx = [i for i in keep if name in ("all", domains[i])]
        scores = np.asarray([[r.score for r in results[i]] for i in idx], dtype=float)
        lengths = np.asarray([[len(s.response_text) for s in groups[i]] for i in idx], dtype=float)
        grids[name] = {"reward": pairwise.rmbench_grid(scores[:, :3], scores[:, 3:]),
                       "length_baseline": pairwise.rmbench_grid(lengths[:, :3], lengths[:, 3:]), "items": len(idx)}
    total = grids["all"]["reward"]
    summary = [("items scored", f"{len(keep)}/{len(groups)}"), ("errors", str(errors or "none")),
               ("easy / normal / hard", f"{total.easy:.4f} / {total.normal:.4f} / {total.hard:.4f}"),
               ("average", f"{total.average:.4f}")]
    rows = [[d, g["items"], f"{g['reward'].easy:.4f}", f"{g['reward'].normal:.4f}", f"{g['reward'].hard:.4f}",
             f"{g['reward'].average:.4f}", f"{g['length_baseline'].hard:.4f}"] for d, g in grids.items()]
    section = rp.Section("Style-substance grid (RM-Bench)", text="hard = a plainer correct response against a more decorated wrong one.",
                         columns=["domain", "items", "easy", "normal", "hard", "average", "length baseline (hard)"], rows=rows)
    return summary, [section], {"items": len(groups), "scored_items": len(keep), "errors": errors, "grids": grids}


def _process_rows(path: str | Path) -> tuple[list[Sample], list[int], list[str]]:
    source = str(path)
    samples, labels, subsets = [], [], []
    for line, row in read_rows(path):
        steps = _texts(row.get("steps"), "steps", source, line)
        label = row.get("label")
        if isinstance(label, bool) or not isinstance(label, int) or not -1 <= label < len(steps):
            raise InputError(f"label must be -1 or a step index below {len(steps)}, got {label!r}", source=source, line=line)
        samples.append(Sample(prompt=str(row.get("problem", row.get("prompt", ""))), response="\n\n".join(steps),
                              steps=tuple(steps), meta={"line": line}))
        labels.append(label)
        subsets.append(str(row.get("subset", "all")))
    return samples, labels, subsets


def _step_labels(label: int, n_steps: int) -> list[int]:
    """Known step labels: steps before the first error are right (1), the first error is wrong
    (0); later steps are unknown and left out. All steps are right when label is −1."""
    return [1] * n_steps if label == -1 else [1] * label + [0]


def evaluate_process(path: str | Path, reward: Reward, *, threshold: float = 0.5, workers: int = 0,
                     timeout: float | None = None) -> Outcome:
    """ProcessBench F1 per subset and PRMBench-style step F1 for a process reward."""
    samples, labels, subsets = _process_rows(path)
    with scorer(reward, workers=workers, timeout=timeout) as score:
        results = score(samples)
    usable = [i for i, r in enumerate(results) if r.steps is not None and len(r.steps) == len(samples[i].steps or ())]
    unusable = set(range(len(results))) - set(usable)
    dropped = error_counts([results[i] for i in sorted(unusable)])
    # ok results without one score per step: the reward is not a process reward for these rows
    missing_steps = sum(1 for i in unusable if results[i].score is not None)
    if missing_steps:
        dropped["no_step_scores"] = missing_steps
    if not usable:
        raise InputError(f"no sample got one score per step from {reward.name}; dropped: {dropped}", source=str(path))
    preds = {i: prm_metrics.first_error_step(results[i].steps or (), threshold=threshold) for i in usable}
    by_subset: dict[str, Any] = {}
    for name in [*sorted({subsets[i] for i in usable}), "all"]:
        idx = [i for i in usable if name in ("all", subsets[i])]
        try:
            by_subset[name] = prm_metrics.processbench_f1([labels[i] for i in idx], [preds[i] for i in idx])
        except InputError as exc:  # a subset with only correct or only flawed solutions
            by_subset[name] = str(exc)
    truth = [t for i in usable for t in _step_labels(labels[i], len(samples[i].steps or ()))]
    guess = [int(s >= threshold) for i in usable for s in (results[i].steps or ())[: len(_step_labels(labels[i], len(samples[i].steps or ())))]]
    step = prm_metrics.step_f1(truth, guess)
    summary = [("solutions scored", f"{len(usable)}/{len(samples)}"), ("dropped", str(dropped or "none")),
               ("step F1+ / F1− / PRMScore", f"{step.f1_positive:.4f} / {step.f1_negative:.4f} / {step.prm_score:.4f}")]
    rows = []
    for name, v in by_subset.items():
        rows.append([name, f"{v.acc_error:.4f}", f"{v.acc_correct:.4f}", f"{v.f1:.4f}", v.n_error, v.n_correct]
                    if isinstance(v, prm_metrics.ProcessBenchScore) else [name, "—", "—", v, "—", "—"])
    if isinstance(by_subset["all"], prm_metrics.ProcessBenchScore):
        summary.append(("ProcessBench F1 (all)", f"{by_subset['all'].f1:.4f}"))
    section = rp.Section("First-error detection (ProcessBench)", text=f"a step scoring below {threshold} is predicted wrong.",
                         columns=["subset", "acc (flawed)", "acc (correct)", "F1", "flawed", "correct"], rows=rows)
    return summary, [section], {"threshold": threshold, "dropped": dropped, "subsets": by_subset, "step_f1": step}


def evaluate_judge(path: str | Path) -> Outcome:
    """Order-swap consistency (and accuracy, with labels) of a pairwise judge's saved verdicts.

    Rows: `verdict_ab` (the judge shown A then B), `verdict_ba` (shown B then A; "A" means the
    response shown first), each "A", "B" or "tie"; optional `label` ("A"/"B") and `subset`.
    """
    source = str(path)
    rows = read_rows(path)
    for line, row in rows:
        if "verdict_ab" not in row or "verdict_ba" not in row:
            raise InputError("judge rows need `verdict_ab` and `verdict_ba`", source=source, line=line)
    has_labels = all("label" in row for _, row in rows)
    subsets = [str(row.get("subset", "all")) for _, row in rows]
    by_subset: dict[str, pairwise.JudgeConsistency] = {}
    for name in [*sorted(set(subsets)), "all"]:
        part = [row for (_, row), s in zip(rows, subsets, strict=True) if name in ("all", s)]
        by_subset[name] = pairwise.judge_consistency(
            [r["verdict_ab"] for r in part], [r["verdict_ba"] for r in part],
            [r["label"] for r in part] if has_labels else None,
        )
    total = by_subset["all"]
    summary = [("items", str(len(rows))), ("order-swap consistency", f"{total.consistency:.4f}"),
               ("inconsistent (counted wrong)", str(total.inconsistent))]
    if total.accuracy is not None:
        summary.append(("accuracy (JudgeBench rule)", f"{total.accuracy:.4f}"))
    table = [[k, f"{v.consistency:.4f}", v.inconsistent, "—" if v.accuracy is None else f"{v.accuracy:.4f}"]
             for k, v in by_subset.items()]
    section = rp.Section("Judge order-swap consistency (JudgeBench)",
                         text="A decisive verdict and a tie resolve to the decisive one; opposite verdicts are inconsistent.",
                         columns=["subset", "consistency", "inconsistent", "accuracy"], rows=table)
    return summary, [section], {"items": len(rows), "subsets": by_subset}
