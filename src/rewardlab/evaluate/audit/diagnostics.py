"""Rollout diagnostics: the numbers to watch while training on a reward.

Over a file of scored group rollouts (several responses per prompt, each with its result):

- zero-variance share: groups whose scores are all equal give GRPO-style advantages of 0, so
  no learning signal (Yu et al. 2025, DAPO "dynamic sampling");
- saturation: groups all at the top (solved, nothing left to learn) or all at the bottom;
  share of single scores at the declared range bounds;
- per-component mean, spread, error count, and the correlation between components
  (redundant or conflicting terms);
- reward–length correlation (Spearman): a reward that pays for length will be exploited
  (Singhal et al. 2023, "A Long Way to Go");
- error and skip rates by kind — errors are never folded into the mean.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rewardlab._lazy import require
from rewardlab.core import JSON, RewardResult, Sample
from rewardlab.errors import InputError

__all__ = ["Diagnostics", "rollout_diagnostics"]


@dataclass(frozen=True)
class Diagnostics:
    n: int
    ok: int
    errors: dict[str, int]  # kind -> count
    skipped: int
    mean: float | None
    std: float | None
    groups: int  # groups with at least two ok scores
    zero_variance_share: float | None
    saturated_high_share: float | None
    saturated_low_share: float | None
    at_bound_share: float | None
    length_spearman: float | None
    components: dict[str, dict[str, JSON]]
    component_correlation: dict[str, dict[str, float | None]]
    scores: list[float]
    lengths: list[int]

    def to_dict(self) -> dict[str, JSON]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _finite_or_none(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _groups(samples: Sequence[Sample], results: Sequence[RewardResult]) -> dict[str, list[float]]:
    grouped: dict[str, list[float]] = defaultdict(list)
    for i, (sample, result) in enumerate(zip(samples, results, strict=True)):
        key = sample.group if sample.group is not None else sample.meta.get("group")
        if key is None:
            key = sample.prompt_text or f"<row {i}>"  # rollouts of one prompt form a group
        if result.score is not None:
            grouped[str(key)].append(result.score)
    return {k: v for k, v in grouped.items() if len(v) >= 2}


def _components(results: Sequence[RewardResult]) -> tuple[dict[str, dict[str, JSON]], dict[str, dict[str, float | None]]]:
    names = sorted({name for r in results for name in r.components})
    stats: dict[str, dict[str, JSON]] = {}
    columns: dict[str, list[float]] = {}
    for name in names:
        parts = [r.components.get(name) for r in results]
        values = [p.score for p in parts if p is not None and p.score is not None]
        kinds = Counter(p.error.kind.value for p in parts if p is not None and p.error is not None)
        stats[name] = {
            "mean": float(np.mean(values)) if values else None,
            "std": float(np.std(values)) if values else None,
            "ok": len(values),
            "errors": dict(kinds),
        }
        columns[name] = [p.score if p is not None and p.score is not None else np.nan for p in parts]
    corr: dict[str, dict[str, float | None]] = {}
    for a in names:
        corr[a] = {}
        for b in names:
            x, y = np.asarray(columns[a]), np.asarray(columns[b])
            keep = ~(np.isnan(x) | np.isnan(y))
            ok = keep.sum() >= 2 and np.std(x[keep]) > 0 and np.std(y[keep]) > 0
            corr[a][b] = _finite_or_none(np.corrcoef(x[keep], y[keep])[0, 1]) if ok else None
    return stats, corr


def rollout_diagnostics(
    samples: Sequence[Sample],
    results: Sequence[RewardResult],
    *,
    bounds: tuple[float, float] | None = None,
    tol: float = 1e-9,
) -> Diagnostics:
    """Training-health numbers for scored rollouts.

    Args:
        samples: the rollouts; `group` (or `meta["group"]`, else the prompt) ties a prompt's
            responses together.
        results: one result per rollout.
        bounds: the reward's declared (low, high) for saturation; default the observed min/max.
        tol: scores within `tol` count as equal.
    """
    if len(samples) != len(results):
        raise InputError(f"{len(samples)} rollouts but {len(results)} results", source="rollout_diagnostics")
    if not samples:
        raise InputError("no rollouts to diagnose", source="rollout_diagnostics")
    ok = [(s, r.score) for s, r in zip(samples, results, strict=True) if r.score is not None]
    scores = np.asarray([v for _, v in ok], dtype=float)
    lengths = np.asarray([len(s.response_text) for s, _ in ok])
    kinds = Counter(r.error.kind.value for r in results if r.error is not None)
    skipped = sum(1 for r in results if r.status.value == "skipped")
    lo, hi = bounds if bounds is not None else ((scores.min(), scores.max()) if scores.size else (0.0, 0.0))
    groups = _groups(samples, results)
    spreads = np.asarray([np.ptp(v) for v in groups.values()])
    highs = np.asarray([min(v) >= hi - tol for v in groups.values()])
    lows = np.asarray([max(v) <= lo + tol for v in groups.values()])
    rho = None
    if scores.size >= 2 and np.std(scores) > 0 and np.std(lengths) > 0:
        require("scipy", needed_by="the rollout diagnostics")
        from scipy import stats

        rho = _finite_or_none(stats.spearmanr(scores, lengths).statistic)
    components, correlation = _components(results)
    share = (lambda a: float(a.mean())) if groups else (lambda a: None)
    return Diagnostics(
        n=len(results), ok=len(ok), errors=dict(kinds), skipped=skipped,
        mean=float(scores.mean()) if scores.size else None,
        std=float(scores.std()) if scores.size else None,
        groups=len(groups),
        zero_variance_share=share(spreads <= tol),
        saturated_high_share=share(highs), saturated_low_share=share(lows),
        at_bound_share=float(np.mean((scores <= lo + tol) | (scores >= hi - tol))) if scores.size else None,
        length_spearman=rho, components=components, component_correlation=correlation,
        scores=scores.tolist(), lengths=lengths.tolist(),
    )
