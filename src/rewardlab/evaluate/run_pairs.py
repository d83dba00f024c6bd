"""Preference pairs: pairwise accuracy per subset, RewardBench-1 sections and overall scores,
the two-sided length baseline and paired tests against other rewards.

Intervals are cluster bootstraps over prompts: pairs that share a prompt are resampled together.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rewardlab.core import Reward, RewardResult
from rewardlab.errors import InputError
from rewardlab.evaluate import pairwise, rewardbench, stats
from rewardlab.evaluate._scoring import error_counts, scorer
from rewardlab.evaluate.audit import report as rp
from rewardlab.evaluate.datasets import PairSet

__all__ = ["LENGTH", "evaluate_pairs"]

LENGTH = "length baseline"
Outcome = tuple[list[tuple[str, str]], list[rp.Section], dict[str, Any]]


def _pair_outcomes(reward: Reward, pairs: PairSet, workers: int, timeout: float | None) -> tuple[np.ndarray, list[RewardResult]]:
    """Per pair 1.0 (chosen strictly higher), 0.0, or NaN when either side has no score."""
    with scorer(reward, workers=workers, timeout=timeout) as score:
        results = score(pairs.chosen + pairs.rejected)
    n = len(pairs.chosen)
    out = np.full(n, np.nan)
    for i, (a, b) in enumerate(zip(results[:n], results[n:], strict=True)):
        if a.score is not None and b.score is not None:
            out[i] = float(a.score > b.score)
    return out, results


def _compare_pairs(name: str, mine: np.ndarray, others: dict[str, np.ndarray], prompts: list[str], seed: int) -> dict[str, Any]:
    """Paired McNemar tests of `mine` against each other outcome vector, on pairs both scored."""
    out = {}
    for other, theirs in others.items():
        both = ~(np.isnan(mine) | np.isnan(theirs))
        if both.any():
            out[f"{name} vs {other}"] = stats.compare_paired(mine[both], theirs[both], seed=seed,
                                                             clusters=[p for p, b in zip(prompts, both, strict=True) if b])
    return out


def _prompt_key(pairs: PairSet, i: int) -> str:
    prompt = pairs.chosen[i].prompt
    return prompt if isinstance(prompt, str) else repr(prompt)


def _length_outcomes(pairs: PairSet, direction: str) -> np.ndarray:
    sign = 1 if direction == "longer" else -1
    return np.asarray([float(sign * len(a.response_text) > sign * len(b.response_text))
                       for a, b in zip(pairs.chosen, pairs.rejected, strict=True)])


def _accuracies(pairs: PairSet, keep: list[int], outcomes: np.ndarray, seed: int) -> dict[str, Any]:
    prompts = [_prompt_key(pairs, i) for i in keep]
    subsets = np.asarray([pairs.subsets[i] for i in keep])
    chosen = [pairs.chosen[i].response_text for i in keep]
    rejected = [pairs.rejected[i].response_text for i in keep]
    per_subset = {}
    for s in sorted(set(subsets.tolist())):
        mask = subsets == s
        per_subset[s] = {
            "accuracy": stats.bootstrap_ci(outcomes[mask], clusters=[p for p, m in zip(prompts, mask, strict=True) if m], seed=seed),
            "length_baseline": pairwise.length_baseline([t for t, m in zip(chosen, mask, strict=True) if m],
                                                        [t for t, m in zip(rejected, mask, strict=True) if m]),
        }
    return {"accuracy": stats.bootstrap_ci(outcomes, clusters=prompts, seed=seed),
            "length_baseline": pairwise.length_baseline(chosen, rejected), "subsets": per_subset,
            "prompts": len(set(prompts))}


def _summary(numbers: dict[str, Any], n: int) -> list[tuple[str, str]]:
    rows = [("pairs scored", f"{numbers['scored_pairs']}/{n} ({numbers['prompts']} prompts)"),
            ("pair errors", str(numbers["pair_errors"] or "none")),
            ("pairwise accuracy [95% CI, bootstrap by prompt]", str(numbers["accuracy"])),
            ("length baseline (better of longer/shorter wins)", str(numbers["length_baseline"])),
            ("ties (counted wrong)", str(numbers["ties"]))]
    overall = numbers.get("rewardbench")
    if overall is not None:
        rows += [(f"section {k}", f"{v:.4f}") for k, v in overall.sections.items()]
        rows.append(("RewardBench score: mean of sections", f"{overall.mean_of_sections:.4f}"))
        rows.append(("RewardBench score: sections ×2 + prior sets ×1",
                     "— (no prior-set subsets)" if overall.with_prior_sets is None else f"{overall.with_prior_sets:.4f}"))
    rows += [(f"accuracy of {k}", str(v)) for k, v in numbers.get("other_accuracy", {}).items()]
    rows += [(k, f"Δ = {c.difference} (p = {c.p_value:.3g}, {c.test})") for k, c in numbers["comparisons"].items()]
    return rows


def evaluate_pairs(
    pairs: PairSet, reward: Reward, *, others: Sequence[Reward] = (), seed: int = 0, workers: int = 0,
    timeout: float | None = None,
) -> Outcome:
    """Pairwise accuracy of `reward` with CIs, per subset, RewardBench sections and both overall
    scores, the two-sided length baseline, and paired tests against it and each of `others`.

    A pair where either side is an error or skipped is left out and counted in `pair_errors`.
    """
    all_outcomes, results = _pair_outcomes(reward, pairs, workers, timeout)
    n = len(pairs.chosen)
    chosen_r, rejected_r = results[:n], results[n:]
    keep = [i for i in range(n) if not np.isnan(all_outcomes[i])]
    if not keep:
        raise InputError(f"no pair could be scored; errors: {error_counts(results)}", source=pairs.source)
    c = np.asarray([chosen_r[i].score for i in keep], dtype=float)
    r = np.asarray([rejected_r[i].score for i in keep], dtype=float)
    dropped = sorted(set(range(n)) - set(keep))
    numbers: dict[str, Any] = {"n_pairs": n, "scored_pairs": len(keep), "ties": int(np.sum(c == r)),
                               "pair_errors": error_counts([x for i in dropped for x in (chosen_r[i], rejected_r[i])]),
                               **_accuracies(pairs, keep, pairwise.pairwise_outcomes(c, r), seed)}
    rivals = {LENGTH: _length_outcomes(pairs, numbers["length_baseline"].direction)}
    for other in others:
        rivals[other.name], other_results = _pair_outcomes(other, pairs, workers, timeout)
        scored = ~np.isnan(rivals[other.name])
        numbers.setdefault("other_accuracy", {})[other.name] = stats.bootstrap_ci(
            rivals[other.name][scored], clusters=[_prompt_key(pairs, int(i)) for i in np.flatnonzero(scored)], seed=seed) if scored.any() else None
        numbers.setdefault("other_errors", {})[other.name] = error_counts(other_results)
    numbers["comparisons"] = _compare_pairs(reward.name, all_outcomes, rivals, [_prompt_key(pairs, i) for i in range(n)], seed)
    known = {s: v["accuracy"].estimate for s, v in numbers["subsets"].items()
             if s in rewardbench.REWARDBENCH_EXAMPLE_COUNTS or s in rewardbench.PRIOR_SETS}
    if any(s in rewardbench.REWARDBENCH_EXAMPLE_COUNTS for s in known):
        numbers["rewardbench"] = rewardbench.rewardbench_overall(known)
        numbers["rewardbench_sections"] = numbers["rewardbench"].sections
    rows = [[s, str(v["accuracy"]), v["accuracy"].n, str(v["length_baseline"])] for s, v in numbers["subsets"].items()]
    c_len = [len(pairs.chosen[i].response_text) - len(pairs.rejected[i].response_text) for i in keep]
    margins = c - r
    section = rp.Section("Pairwise accuracy by subset",
                         text="Ties count as wrong. Intervals resample prompts (cluster bootstrap). Length baseline = the better "
                              "of always preferring the longer and always preferring the shorter response.",
                         columns=["subset", "accuracy [95% CI]", "pairs", "length baseline"], rows=rows,
                         figures=[("margin vs length difference", rp.plot_length_scatter(c_len, margins.tolist(), (margins > 0).tolist(),
                                                                                          title="score margin vs length difference (chosen − rejected)"))])
    return _summary(numbers, n), [section], numbers
