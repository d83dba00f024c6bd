"""Cross-check two rewards on the same samples: count, list and group their disagreements.

Verifiers are trusted without being checked against each other; two maths verifiers, or a
verifier and a dataset's human labels, disagree more often than people expect. Scores are
binarised at `threshold` (pass = score >= threshold). A disagreement is a sample where one
passes and the other fails, or where one returns an error and the other a score. Disagreements
are grouped by category and by an optional key (a `meta` field such as the difficulty level,
or any function of the sample) so that they can be reviewed in batches.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

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

    def to_dict(self) -> dict[str, JSON]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def labels_as_results(labels: Sequence[object]) -> list[RewardResult]:
    """Dataset labels (bools, 0/1) as results, so they can be cross-checked like a reward."""
    out = []
    for i, label in enumerate(labels):
        if isinstance(label, bool) or label in (0, 1):
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


def _state(result: RewardResult, threshold: float) -> str:
    if result.score is None:
        return f"{result.status.value}:{result.error.kind.value}" if result.error else result.status.value
    return "pass" if result.score >= threshold else "fail"


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
    for sample, ra, rb in zip(samples, results_a, results_b, strict=True):
        sa, sb = _state(ra, threshold), _state(rb, threshold)
        for name, r in ((names[0], ra), (names[1], rb)):
            if r.error is not None:
                errors[name][r.error.kind.value] += 1
        key = _group_key(sample, group_by)
        groups.setdefault(key, Counter())["total"] += 1
        if sa in ("pass", "fail") and sb in ("pass", "fail"):
            confusion[f"{sa}/{sb}"] += 1
        if sa == sb or (sa not in ("pass", "fail") and sb not in ("pass", "fail")):
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
    return CrossCheck(
        names=names, n=len(samples), both_scored=both,
        agreement=agree / both if both else None, kappa=_kappa(confusion, both),
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
