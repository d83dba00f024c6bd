"""Consensus over free-form answers, with label propagation from the few members that have labels.

Where answers cannot be checked for equivalence (open text, not maths), a group still carries a
signal: answers that many others resemble are more likely right (minimum-Bayes-risk selection;
Kumar & Byrne 2004, and the self-consistency of Wang et al. 2023 for free-form text). With
similarity `S_ij` = token F1 of answers i and j (SQuAD normalisation), the consensus reward of
member i is its mean similarity to the other members.

When some members carry a label (`meta[label_key]`, 0 or 1), the labels spread along the same
graph (Zhou et al. 2004, "Learning with Local and Global Consistency"): `F = (I - a W)^-1 Y` with
`W = D^-1/2 S D^-1/2` and `Y` = +1 / -1 for labelled right / wrong and 0 for unlabelled; an
unlabelled member's reward is `(F_i / max|F| + 1) / 2` in [0, 1], a labelled member's its label.

    [[reward.components]]
    name = "consensus"
    use = "labelfree.consensus"
    params = { min_group = 4, min_consensus = 0.2 }

A group smaller than `min_group`, or one where no member's consensus reaches `min_consensus`
(every answer differs from every other: nothing to agree on), is `skipped` with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rewardlab.core import JSON, BaseReward, GroupKey, RewardResult, Sample
from rewardlab.core.choices import check_choices
from rewardlab.errors import ConfigError
from rewardlab.judges.consensus import score_by_group

__all__ = ["Consensus", "spread_labels"]


def spread_labels(similarity: np.ndarray, labels: Sequence[int | None], *, alpha: float = 0.9) -> np.ndarray:
    """Label spreading over a `(n, n)` non-negative similarity matrix; returns `F`, shape `(n,)`.

    `labels[i]` is 1 (right), 0 (wrong) or None (unknown). Zhou et al. 2004, eq. (closed form):
    `F = (I - alpha W)^-1 Y`, `W = D^-1/2 S D^-1/2` with a zero diagonal.
    """
    s = np.array(similarity, dtype=float)
    np.fill_diagonal(s, 0.0)
    degree = s.sum(axis=1)
    inv_sqrt = np.where(degree > 0, 1.0 / np.sqrt(np.where(degree > 0, degree, 1.0)), 0.0)
    w = inv_sqrt[:, None] * s * inv_sqrt[None, :]
    y = np.array([0.0 if lab is None else (1.0 if lab else -1.0) for lab in labels])
    return np.linalg.solve(np.eye(len(y)) - alpha * w, y)


class Consensus(BaseReward):
    """Mean token-F1 agreement with the rest of the group, or labels spread from labelled members.

    Args:
        min_group: fewest members a group needs.
        min_consensus: the best member's consensus must reach this, else the group is skipped.
        label_key: the `meta` field with a member's known label (0/1), if any.
        alpha: label-spreading weight of neighbours vs the member's own label, in (0, 1).
        group_by: `group` (the sample's prompt-group id) or `prompt` (same prompt text).
    """

    name = "labelfree.consensus"
    range = (0.0, 1.0)

    def __init__(self, *, min_group: int = 4, min_consensus: float = 0.2, label_key: str = "label", alpha: float = 0.9, group_by: GroupKey = "group"):
        if min_group < 2:
            raise ConfigError(f"min_group must be >= 2, got {min_group}")
        if not 0.0 <= min_consensus <= 1.0 or not 0.0 < alpha < 1.0:
            raise ConfigError(f"need min_consensus in [0, 1] and alpha in (0, 1), got {min_consensus}, {alpha}")
        check_choices(Consensus.__init__, group_by=group_by)
        self.min_group, self.min_consensus, self.label_key, self.alpha, self.group_by = min_group, min_consensus, label_key, alpha, group_by
        self.group_keys: frozenset[GroupKey] = frozenset({group_by})  # runners keep a group in one batch

    def compute(self, sample: Sample) -> RewardResult:
        return self.compute_batch([sample])[0]

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        return score_by_group(samples, self.group_by, self.name, self._score_group)

    def _label(self, sample: Sample) -> int | None:
        value = sample.meta.get(self.label_key)
        return None if value is None else int(bool(value))

    def _score_group(self, group: Sequence[Sample]) -> list[RewardResult]:
        from rewardlab.verify.text import token_f1

        n = len(group)
        texts = [s.response_text for s in group]
        sim = np.array([[token_f1(a, b)[2] for b in texts] for a in texts])
        consensus = (sim.sum(axis=1) - np.diag(sim)) / max(n - 1, 1)
        labels = [self._label(s) for s in group]
        shared: dict[str, JSON] = {"group_size": n, "best_consensus": float(consensus.max()), "labelled": sum(x is not None for x in labels)}
        if n < self.min_group:
            return [RewardResult.skip(f"group too small to trust: {n} member(s) < min_group {self.min_group}", info=shared)] * n
        if consensus.max() < self.min_consensus:
            return [RewardResult.skip(f"group too split to trust: best consensus {consensus.max():.2f} < min_consensus {self.min_consensus:g}", info=shared)] * n
        if not shared["labelled"]:
            return [RewardResult.ok(float(c), info={**shared, "consensus": float(c)}) for c in consensus]
        spread = spread_labels(sim, labels, alpha=self.alpha)
        scale = float(np.abs(spread).max()) or 1.0
        out = []
        for label, f, c in zip(labels, spread, consensus, strict=True):
            score = float(label) if label is not None else (float(f) / scale + 1.0) / 2.0
            out.append(RewardResult.ok(score, info={**shared, "consensus": float(c), "propagated": label is None}))
        return out
