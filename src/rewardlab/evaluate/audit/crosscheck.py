"""Cross-check two rewards on the same samples: count, list and group their disagreements.

Verifiers are trusted without being checked against each other; two maths verifiers, or a
verifier and a dataset's human labels, disagree more often than people expect. Scores are
binarised at `threshold` (pass = score >= threshold). A disagreement is a sample where one
passes and the other fails, or where one returns an error and the other a score. Disagreements
are grouped by category and by an optional key (a `meta` field such as the difficulty level,
or any function of the sample) so that they can be reviewed in batches.

A score outside [0, 1] (a reward model's logit) has no meaningful threshold, so when one side is
unbounded it is compared by ranking instead: the AUROC of its scores for the other side's
pass/fail (ties count half), and the pairwise accuracy within prompt groups (a passing response
scored strictly above a failing one of the same prompt; ties wrong), as RewardBench counts pairs.
When both sides are unbounded, the Spearman correlation of the scores is reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rewardlab._lazy import require
from rewardlab.core import JSON, Reward, RewardResult, Sample
from rewardlab.errors import InputError

__all__ = ["CrossCheck", "crosscheck_results", "crosscheck_rewards", "labels_as_results"]

GroupBy = str | Callable[[Sample], str] | None


@dataclass(frozen=True)
class CrossCheck:
    """Agreement of reward `a` and reward `b` on the same samples."""

    names: tuple[str, str]
    n: int
    both_scored: int
    agreement: float | None  # share of both-scored samples with the same pass/fail
    kappa: float | None  # Cohen's kappa of pass/fail on both-scored samples
    confusion: dict[str, int]  # "pass/pass", "pass/fail", "fail/pass", "fail/fail"
    errors: dict[str, dict[str, int]]  # per reward name: error kind -> count
    by_category: dict[str, int]
    by_group: dict[str, dict[str, int]]
    disagreements: list[dict[str, JSON]] = field(default_factory=list)
    ranking: dict[str, JSON] | None = None  # set when a side is unbounded: AUROC, pairwise accuracy

    @property
    def by_threshold(self) -> bool:
        """Whether pass/fail at the threshold is meaningful (both sides bounded in [0, 1])."""
        return self.ranking is None

    def to_dict(self) -> dict[str, JSON]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def labels_as_results(labels: Sequence[object]) -> list[RewardResult]:
    """Dataset labels (bools, 0/1) as results, so they can be cross-checked like a reward; an
    unknown label (None) is a skipped result, never a fail."""
    out = []
    for i, label in enumerate(labels):
        if label is None:
            out.append(RewardResult.skip("no label"))
        elif isinstance(label, bool) or label in (0, 1):
            out.append(RewardResult.ok(float(label)))  # type: ignore[arg-type,unused-ignore]
        else:
            raise InputError(f"label {label!r} is not a boolean or 0/1", source="labels", line=i + 1)
    return out


def _kappa(confusion: Counter[str], n: int) -> float | None:
    # Cohen 1960: (p_o - p_e) / (1 - p_e), with p_e from the two marginals.
    if n == 0:
        return None
    p_o = (confusion["pass/pass"] + confusion["fail/fail"]) / n
    a_pass = (confusion["pass/pass"] + confusion["pass/fail"]) / n
    b_pass = (confusion["pass/pass"] + confusion["fail/pass"]) / n
    p_e = a_pass * b_pass + (1 - a_pass) * (1 - b_pass)
    return 1.0 if p_e == 1 else (p_o - p_e) / (1 - p_e)


def _state(result: RewardResult, threshold: float, ranked: bool) -> str:
    if result.score is None:
        return f"{result.status.value}:{result.error.kind.value}" if result.error else result.status.value
    if ranked:  # no threshold for an unbounded score: only error-versus-score disagreements count
        return "scored"
    return "pass" if result.score >= threshold else "fail"


def _unbounded(results: Sequence[RewardResult]) -> bool:
    return any(r.score is not None and not 0.0 <= r.score <= 1.0 for r in results)


def _auroc(scores: Sequence[float], positive: Sequence[bool]) -> float | None:
    """Mann-Whitney AUROC: P(score of a positive > score of a negative), ties half."""
    require("scipy", needed_by="the cross-check's AUROC")
    from scipy.stats import rankdata

    pos = int(sum(positive))
    neg = len(positive) - pos
    if pos == 0 or neg == 0:
        return None
    ranks = rankdata(scores)
    return float((sum(r for r, p in zip(ranks, positive, strict=True) if p) - pos * (pos + 1) / 2) / (pos * neg))


def _pairwise_within_groups(scores: Sequence[float], positive: Sequence[bool], groups: Sequence[str]) -> tuple[float | None, int]:
    right = total = 0
    by_group: dict[str, list[tuple[float, bool]]] = {}
    for s, p, g in zip(scores, positive, groups, strict=True):
        by_group.setdefault(g, []).append((s, p))
    for items in by_group.values():
        for sp, pp in items:
            for sn, pn in items:
                if pp and not pn:
                    total += 1
                    right += sp > sn
    return (right / total if total else None), total


def ranking_check(results_a: Sequence[RewardResult], results_b: Sequence[RewardResult], samples: Sequence[Sample],
                  *, names: tuple[str, str], threshold: float) -> dict[str, JSON]:
    """Ranking agreement when a side is unbounded (see the module docstring)."""
    require("scipy", needed_by="the cross-check's rank agreement")
    from scipy import stats

    both = [i for i, (a, b) in enumerate(zip(results_a, results_b, strict=True)) if a.score is not None and b.score is not None]
    a = [float(results_a[i].score) for i in both]  # type: ignore[arg-type]
    b = [float(results_b[i].score) for i in both]  # type: ignore[arg-type]
    a_free, b_free = _unbounded(results_a), _unbounded(results_b)
    out: dict[str, JSON] = {"unbounded": [n for n, free in zip(names, (a_free, b_free), strict=True) if free]}
    if a_free and b_free:
        out["spearman"] = float(stats.spearmanr(a, b).statistic) if len(both) > 1 else None
        return out
    scores, labels, ranked, judge = (a, [x >= threshold for x in b], names[0], names[1]) if a_free \
        else (b, [x >= threshold for x in a], names[1], names[0])
    groups = [samples[i].group or str(samples[i].prompt) for i in both]
    accuracy, n_pairs = _pairwise_within_groups(scores, labels, groups)
    out |= {"ranked": ranked, "by": judge, "auroc": _auroc(scores, labels),
            "pairwise_accuracy_within_groups": accuracy, "pairs": n_pairs}
    return out


def _group_key(sample: Sample, group_by: GroupBy) -> str:
    if group_by is None:
        return "all"
    if callable(group_by):
        return str(group_by(sample))
    return str(sample.meta.get(group_by, "<missing>"))


def crosscheck_results(
    results_a: Sequence[RewardResult],
    results_b: Sequence[RewardResult],
    samples: Sequence[Sample],
    *,
    names: tuple[str, str] = ("a", "b"),
    threshold: float = 0.5,
    group_by: GroupBy = None,
    max_listed: int = 50,
) -> CrossCheck:
    """Compare two lists of results for the same samples.

    Args:
        results_a, results_b: one result per sample from each reward (or `labels_as_results`).
        samples: the samples, for ids, responses and grouping.
        names: display names of the two rewards.
        threshold: a score >= threshold passes.
        group_by: `meta` field name or function giving each sample's group.
        max_listed: disagreements listed in full (all are counted).
    """
    if not (len(results_a) == len(results_b) == len(samples)):
        raise InputError(
            f"{len(results_a)} results for {names[0]}, {len(results_b)} for {names[1]}, {len(samples)} samples",
            source="crosscheck",
        )
    confusion: Counter[str] = Counter()
    errors: dict[str, Counter[str]] = {names[0]: Counter(), names[1]: Counter()}
    categories: Counter[str] = Counter()
    groups: dict[str, Counter[str]] = {}
    listed: list[dict[str, JSON]] = []
    ranked = _unbounded(results_a) or _unbounded(results_b)
    for sample, ra, rb in zip(samples, results_a, results_b, strict=True):
        sa, sb = _state(ra, threshold, ranked), _state(rb, threshold, ranked)
        for name, r in ((names[0], ra), (names[1], rb)):
            if r.error is not None:
                errors[name][r.error.kind.value] += 1
        key = _group_key(sample, group_by)
        groups.setdefault(key, Counter())["total"] += 1
        if sa in ("pass", "fail") and sb in ("pass", "fail"):
            confusion[f"{sa}/{sb}"] += 1
        if sa == sb or (sa not in ("pass", "fail", "scored") and sb not in ("pass", "fail", "scored")):
            continue
        category = f"{names[0]}={sa}, {names[1]}={sb}"
        categories[category] += 1
        groups[key]["disagree"] += 1
        if len(listed) < max_listed:
            listed.append({
                "id": sample.id, "group": key, "category": category,
                names[0]: ra.to_dict(), names[1]: rb.to_dict(),
                "reference": sample.reference, "response_tail": sample.response_text[-300:],
            })
    both = sum(confusion.values())
    agree = confusion["pass/pass"] + confusion["fail/fail"]
    ranking = ranking_check(results_a, results_b, samples, names=names, threshold=threshold) if ranked else None
    by_threshold = ranking is None
    return CrossCheck(
        names=names, n=len(samples), both_scored=both, ranking=ranking,
        agreement=agree / both if both and by_threshold else None, kappa=_kappa(confusion, both) if by_threshold else None,
        confusion={k: confusion[k] for k in ("pass/pass", "pass/fail", "fail/pass", "fail/fail")},
        errors={k: dict(v) for k, v in errors.items()},
        by_category=dict(categories.most_common()),
        by_group={k: dict(v) for k, v in sorted(groups.items())},
        disagreements=listed,
    )


def crosscheck_rewards(
    reward_a: Reward, reward_b: Reward, samples: Sequence[Sample], **options: object
) -> CrossCheck:
    """Score `samples` with both rewards and `crosscheck_results` the results (options as there)."""
    names = options.pop("names", (reward_a.name, reward_b.name))
    return crosscheck_results(reward_a.score_batch(samples), reward_b.score_batch(samples), samples, names=names, **options)  # type: ignore[arg-type]
