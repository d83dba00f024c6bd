"""Benchmark-shaped evaluations beyond plain pairs: best-of-k (RewardBench 2, with its Ties
subset) and the style grid (RM-Bench). Process rewards are in `run_process`, judges in `run_judge`.

Row shapes (JSONL/Parquet; column names follow the benchmarks' releases):

- RewardBench 2: `prompt`, `chosen` (a string or a list; the first is the one credited, as in
  reward-bench), `rejected` (a list), `subset`; rows of the subset "Ties" also need `id`
  ("ref:<n>" / "tied:<n>") and are scored with the Ties formula (`rewardbench.ties_score`);
  `num_correct` defaults to the number of chosen responses;
- RM-Bench: `prompt`, `chosen` and `rejected` as lists of three responses in the styles
  concise, detailed plain, detailed markdown; `domain` (or `subset`).

A reward error on any response of an item drops the item; drops are counted by kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from rewardlab.core import Reward, RewardResult, Sample
from rewardlab.errors import InputError
from rewardlab.evaluate import pairwise, rewardbench, stats
from rewardlab.evaluate._scoring import error_counts, scorer
from rewardlab.evaluate.audit import report as rp
from rewardlab.evaluate.datasets import OnError, read_parsed

__all__ = ["evaluate_bestofk", "evaluate_rmbench"]

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


def _is_ties(subset: str) -> bool:
    return subset.lower() == "ties"


def _bestofk_rows(path: str | Path, on_error: OnError | None = None) -> tuple[list[list[Sample]], list[str], list[tuple[str, int]]]:
    """Response groups (chosen first), subsets and (id, num_correct) per row."""
    source = str(path)

    def item(line: int, row: dict[str, Any]) -> tuple[list[Sample], str, tuple[str, int]]:
        chosen = _texts(row.get("chosen"), "chosen", source, line)
        rejected = _texts(row.get("rejected"), "rejected", source, line)
        subset = str(row.get("subset", "all"))
        num_correct = row.get("num_correct", len(chosen))
        if _is_ties(subset) and not isinstance(row.get("id"), str):
            raise InputError("Ties rows need an `id` 'ref:<n>' or 'tied:<n>'", source=source, line=line)
        if isinstance(num_correct, bool) or not isinstance(num_correct, int) or not 1 <= num_correct <= len(chosen):
            raise InputError(f"num_correct must be 1..{len(chosen)} (the chosen responses), got {num_correct!r}",
                             source=source, line=line)
        prompt = row.get("prompt", "")
        return [Sample(prompt=prompt, response=t, meta={"line": line}) for t in chosen + rejected], subset, (str(row.get("id", "")), num_correct)

    items = read_parsed(path, item, on_error=on_error)
    return [g for g, _, _ in items], [s for _, s, _ in items], [i for _, _, i in items]


def _ties_numbers(idx: list[int], scores: list[list[float]], lengths: list[list[float]], ids: list[tuple[str, int]]) -> dict[str, Any]:
    def items(values: list[list[float]], sign: float = 1.0) -> list[rewardbench.TiesItem]:
        return [rewardbench.TiesItem(ids[i][0], tuple(sign * v for v in values[j]), ids[i][1]) for j, i in enumerate(idx)]

    try:
        ties = rewardbench.ties_score(items(scores))
    except InputError as exc:  # e.g. the ref or tied half of every prompt was dropped
        return {"error": str(exc), "k": "varies"}
    longer, shorter = rewardbench.ties_score(items(lengths)).score, rewardbench.ties_score(items(lengths, -1.0)).score
    return {"accuracy": ties.score, "ties": ties, "k": "varies", "n": len(idx),
            "length_baseline": pairwise.LengthBaseline(longer, shorter)}


def evaluate_bestofk(path: str | Path, reward: Reward, *, seed: int = 0, workers: int = 0, timeout: float | None = None,
                     on_error: OnError | None = None) -> Outcome:
    """RewardBench-2 accuracy per subset (ties at the top 1/t; Ties by its own formula), the
    mean over subsets, and the two-sided length baseline. With `on_error`, a row that cannot be
    read is handed to it and left out (see `datasets.read_parsed`)."""
    source = str(path)
    groups, subsets, ids = _bestofk_rows(path, on_error)
    results, errors = _score_groups(reward, groups, workers, timeout)
    keep = _complete(results)
    if not keep:
        raise InputError(f"no item could be scored; errors: {errors}", source=source)
    by_subset: dict[str, dict[str, Any]] = {}
    for name in sorted({subsets[i] for i in keep}):
        idx = [i for i in keep if subsets[i] == name]
        scores = [[float(r.score) for r in results[i] if r.score is not None] for i in idx]
        lengths = [[float(len(s.response_text)) for s in groups[i]] for i in idx]
        if _is_ties(name):
            by_subset[name] = _ties_numbers(idx, scores, lengths, ids)
            continue
        credit = np.asarray([pairwise.best_of_k_outcomes([s[0]], [s[1:]])[0] for s in scores])
        longer = np.mean([pairwise.best_of_k_outcomes([v[0]], [v[1:]])[0] for v in lengths])
        shorter = np.mean([pairwise.best_of_k_outcomes([-v[0]], [[-x for x in v[1:]]])[0] for v in lengths])
        ks = sorted({len(s) for s in scores})
        by_subset[name] = {"accuracy": stats.bootstrap_ci(credit, seed=seed), "k": ks[0] if len(ks) == 1 else "varies",
                           "n": len(idx), "length_baseline": pairwise.LengthBaseline(float(longer), float(shorter))}
    defined = {k: v for k, v in by_subset.items() if "error" not in v}
    overall = float(np.mean([_estimate(v["accuracy"]) for v in defined.values()])) if defined else None
    numbers = {"items": len(groups), "scored_items": len(keep), "errors": errors, "subsets": by_subset, "score": overall}
    summary = [("items scored", f"{len(keep)}/{len(groups)}"), ("errors", str(errors or "none")),
               (f"RewardBench 2 score (mean of {len(defined)} subsets)", "—" if overall is None else f"{overall:.4f}")]
    summary += [(f"subset {k}: not scored", v["error"]) for k, v in by_subset.items() if "error" in v]
    rows = [[s, str(v["accuracy"]) if not isinstance(v["accuracy"], float) else f"{v['accuracy']:.4f} (Ties formula)",
             v["k"], v["n"], str(v["length_baseline"])] for s, v in defined.items()]
    section = rp.Section("Best-of-k accuracy (RewardBench 2)",
                         text="1 when the first correct response scores strictly highest, 1/t on a t-way tie at the top; "
                              "Ties: 0.3·acc(tied) + 0.3·acc(ref) + 0.2·P(margin > spread) + 0.2·P(hard margin > spread) "
                              "+ 0.01·tanh term. Length baseline: the better of longest-wins and shortest-wins.",
                         columns=["subset", "accuracy [95% CI]", "k", "items", "length baseline"], rows=rows)
    return summary, [section], numbers


def _estimate(value: Any) -> float:
    return float(value) if isinstance(value, float) else float(value.estimate)


def evaluate_rmbench(path: str | Path, reward: Reward, *, workers: int = 0, timeout: float | None = None,
                     on_error: OnError | None = None) -> Outcome:
    """RM-Bench easy/normal/hard accuracies per domain, and the same grid for response length.
    With `on_error`, a row that cannot be read (not three chosen and three rejected responses,
    ...) is handed to it and left out."""
    source = str(path)

    def item(line: int, row: dict[str, Any]) -> tuple[list[Sample], str]:
        chosen = _texts(row.get("chosen"), "chosen", source, line, 3)
        rejected = _texts(row.get("rejected"), "rejected", source, line, 3)
        prompt = row.get("prompt", "")
        return ([Sample(prompt=prompt, response=t, meta={"line": line}) for t in chosen + rejected],
                str(row.get("domain", row.get("subset", "all"))))

    items = read_parsed(path, item, on_error=on_error)
    groups, domains = [g for g, _ in items], [d for _, d in items]
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
                       "length_baseline": pairwise.rmbench_grid(lengths[:, :3], lengths[:, 3:]),
                       "shorter_baseline": pairwise.rmbench_grid(-lengths[:, :3], -lengths[:, 3:]), "items": len(idx)}
    total = grids["all"]["reward"]
    summary = [("items scored", f"{len(keep)}/{len(groups)}"), ("errors", str(errors or "none")),
               ("easy / normal / hard", f"{total.easy:.4f} / {total.normal:.4f} / {total.hard:.4f}"),
               ("average", f"{total.average:.4f}")]
    rows = [[d, g["items"], f"{g['reward'].easy:.4f}", f"{g['reward'].normal:.4f}", f"{g['reward'].hard:.4f}",
             f"{g['reward'].average:.4f}", f"{g['length_baseline'].hard:.4f}", f"{g['shorter_baseline'].hard:.4f}"]
            for d, g in grids.items()]
    section = rp.Section("Style-substance grid (RM-Bench)", text="hard = a plainer correct response against a more decorated wrong one.",
                         columns=["domain", "items", "easy", "normal", "hard", "average", "longer wins (hard)", "shorter wins (hard)"], rows=rows)
    return summary, [section], {"items": len(groups), "scored_items": len(keep), "errors": errors, "grids": grids}
