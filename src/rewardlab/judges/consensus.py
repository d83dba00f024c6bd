"""Label-free rewards from a group of sampled answers: majority-vote pseudo-labels (TTRL) and
rewards over the group's answer distribution.

Test-Time Reinforcement Learning (Zuo et al. 2025, "TTRL: Test-Time Reinforcement Learning",
arXiv:2504.16084) rewards each of the N responses to one prompt against the answer most of them
agree on: `r_i = 1[answer_i == majority answer]`. Answers are compared with the maths verifier
(`rewardlab.verify.math.check`), so `\\frac{1}{2}` and `0.5` vote together.

    [[reward.components]]
    name = "ttrl"
    use = "labelfree.majority_vote"
    params = { min_group = 4, min_agreement = 0.5 }

Every sample needs a `group` (the prompt-group id); it is a group reward (`group_keys`), so the
runner, the server and the trainer adapters hand it whole groups. A pseudo-label is only as good
as the agreement behind it, so a group that is too small (fewer than `min_group` members) or too
split (the largest cluster holds less than `min_agreement` of the group; in `binary` mode with
`ties = "skip"`, also two clusters tying for the largest) gives every member a `skipped` result
whose `skip_reason` and `info` say why: an untrusted pseudo-label trains the policy on noise, and
a skipped row does not count in a total.

Modes, with p(c) = the share of the group in answer cluster c and N the group size:

* `binary`: TTRL's rule above.
* `frequency`: `p(c_i)`, the share of the group agreeing with the sample's own answer: the
  reward of EMPO (Zhang et al. 2025, "Right Question is Already Half the Answer: Fully
  Unsupervised LLM Reasoning Incentivization", arXiv:2504.05812, semantic-entropy
  minimisation), a graded self-consistency reward (Wang et al. 2023): minority answers keep a
  reward in proportion to their support.
* `entropy`: `1 + log p(c_i) / log N` in [0, 1]: 1 when the whole group agrees, 0 for an answer
  no other member gave. Its group mean is `1 - H(p) / log N` (H: the entropy of the group's
  answer distribution), and `log p(c_i)` is the score-function reward whose policy gradient
  lowers H, the answer entropy that EMPO and TTRL's analysis track. Every result's info
  carries `answer_entropy` (nats) and `normalized_entropy` (H / log N).

A response with no extractable answer is an `ok` 0 (it cannot agree with anything), as in
`math.answer`; it still counts in the group size. No label-free reward can reward the case
where the minority is right (a group whose majority is wrong rewards the wrong answer in every
mode): that needs a label, a verifier or a judge.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rewardlab.core import JSON, BaseReward, ErrorKind, GroupKey, RewardResult, Sample
from rewardlab.core.choices import check_choices
from rewardlab.core.reward import group_id
from rewardlab.errors import ConfigError

__all__ = ["Clusters", "MajorityVote", "answer_entropy", "cluster_answers"]


@dataclass(frozen=True)
class Clusters:
    """Answers grouped by equivalence.

    Attributes:
        labels: per answer, the index of its cluster (None for a missing answer).
        representatives: per cluster, the first answer that opened it.
        sizes: per cluster, how many answers it holds.
        undecided: how many comparisons the verifier could not decide (counted as different).
    """

    labels: tuple[int | None, ...]
    representatives: tuple[str, ...]
    sizes: tuple[int, ...]
    undecided: int


def _same(reference: str, candidate: str) -> tuple[bool, bool]:
    """(equivalent, decided) under the maths verifier; identical strings skip the verifier."""
    if reference.strip() == candidate.strip():
        return True, True
    from rewardlab.verify.math import check

    verdict = check(reference, candidate)
    return verdict.equivalent, verdict.decided


def cluster_answers(answers: Sequence[str | None]) -> Clusters:
    """Group answers by maths equivalence (greedy: each joins the first cluster it matches).

    Greedy single-pass clustering against each cluster's first member is what majority voting
    with a verifier does in practice (Wang et al. 2023, self-consistency); equivalence checks
    are not guaranteed transitive, so comparing against one representative keeps the result
    independent of how many members a cluster already has.
    """
    reps: list[str] = []
    sizes: list[int] = []
    labels: list[int | None] = []
    undecided = 0
    for answer in answers:
        if answer is None:
            labels.append(None)
            continue
        for index, rep in enumerate(reps):
            same, decided = _same(rep, answer)
            undecided += not decided
            if same:
                sizes[index] += 1
                labels.append(index)
                break
        else:
            reps.append(answer)
            sizes.append(1)
            labels.append(len(reps) - 1)
    return Clusters(tuple(labels), tuple(reps), tuple(sizes), undecided)


def answer_entropy(sizes: Sequence[int], n: int) -> float:
    """Entropy (nats) of a group's answer distribution `p(c) = size_c / n`; members without
    an answer are left out of the sum (they are no cluster), so they lower no one's share."""
    return -sum((k / n) * math.log(k / n) for k in sizes if k)


def score_by_group(
    samples: Sequence[Sample], group_by: GroupKey, name: str, score_group: Callable[[Sequence[Sample]], list[RewardResult]]
) -> list[RewardResult]:
    """Score each group of `samples` (by `group` id or prompt text) with `score_group`, in input order.

    A sample without a group id (under `group_by="group"`) is an `invalid_input` error; the
    others are still scored.
    """
    out: list[RewardResult | None] = [None] * len(samples)
    groups: dict[str, list[int]] = {}
    for i, sample in enumerate(samples):
        key = group_id(sample, group_by)
        if key is None:
            out[i] = RewardResult.failure(ErrorKind.INVALID_INPUT, f"{name} needs the sample's `group` (prompt-group id); sample {sample.id} has none")
        else:
            groups.setdefault(key, []).append(i)
    for members in groups.values():
        for i, result in zip(members, score_group([samples[i] for i in members]), strict=True):
            out[i] = result
    return [r for r in out if r is not None]


class MajorityVote(BaseReward):
    """Reward agreement with the group's majority answer (TTRL pseudo-label), or skip the group.

    Args:
        min_group: fewest members a group needs before its majority is trusted.
        min_agreement: smallest share of the group the majority cluster must hold, in (0, 1].
        mode: `binary` (1 if the sample's answer is the majority answer), `frequency` (the
            share of the group holding the sample's answer) or `entropy` (`1 + log p / log N`);
            see the module doc.
        ties: in `binary` mode, two clusters tied for the largest: `skip` the group (the
            pseudo-label is a coin toss) or take the `first` (the cluster whose first member
            comes first: TTRL's `Counter.most_common`).
        answer_key: read the already-extracted answer from `meta[answer_key]` instead of
            extracting it from the response with `rewardlab.verify.math.extract_answer`.
        group_by: `group` (the sample's prompt-group id) or `prompt` (samples with the same
            prompt text vote together: what a trainer's batch of N completions per prompt is,
            when it sends no group id).
    """

    name = "labelfree.majority_vote"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        min_group: int = 4,
        min_agreement: float = 0.5,
        mode: Literal["binary", "frequency", "entropy"] = "binary",
        ties: Literal["skip", "first"] = "skip",
        answer_key: str | None = None,
        group_by: Literal["group", "prompt"] = "group",
    ):
        if min_group < 2:
            raise ConfigError(f"min_group must be >= 2 (one answer is no vote), got {min_group}")
        if not 0.0 < min_agreement <= 1.0:
            raise ConfigError(f"min_agreement must be in (0, 1], got {min_agreement}")
        check_choices(MajorityVote.__init__, mode=mode, ties=ties, group_by=group_by)
        self.min_group, self.min_agreement, self.mode, self.answer_key = min_group, min_agreement, mode, answer_key
        self.group_by, self.ties = group_by, ties
        self.group_keys: frozenset[GroupKey] = frozenset({group_by})  # runners keep a group in one batch

    def compute(self, sample: Sample) -> RewardResult:
        return self.compute_batch([sample])[0]

    def _answer(self, sample: Sample) -> str | None:
        if self.answer_key is not None:
            value = sample.meta.get(self.answer_key)
            return None if value is None else str(value)
        from rewardlab.verify.math import extract_answer

        return extract_answer(sample.response_text).answer

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        return score_by_group(samples, self.group_by, self.name, self._score_group)

    def _score_group(self, group: Sequence[Sample]) -> list[RewardResult]:
        answers = [self._answer(s) for s in group]
        clusters = cluster_answers(answers)
        n = len(group)
        ranked = sorted(clusters.sizes, reverse=True)
        top = ranked[0] if ranked else 0
        majority = clusters.sizes.index(top) if top else None
        agreement = top / n
        entropy = answer_entropy(clusters.sizes, n)
        shared: dict[str, JSON] = {
            "group_size": n,
            "agreement": agreement,
            "votes": {rep: size for rep, size in zip(clusters.representatives, clusters.sizes, strict=True)},
            "no_answer": sum(a is None for a in answers),
            "undecided_checks": clusters.undecided,
            "answer_entropy": entropy,
            "normalized_entropy": entropy / math.log(n) if n > 1 else 0.0,
        }
        reason = self._distrust(n, ranked, agreement)
        if reason is not None:
            return [RewardResult.skip(reason, info={**shared, "answer": a}) for a in answers]
        assert majority is not None  # a trusted group has a top cluster
        shared["pseudo_label"] = clusters.representatives[majority]
        return [self._member_result(label, answer, majority, clusters.sizes, n, shared) for label, answer in zip(clusters.labels, answers, strict=True)]

    def _distrust(self, n: int, ranked: Sequence[int], agreement: float) -> str | None:
        if n < self.min_group:
            return f"group too small to trust: {n} member(s) < min_group {self.min_group}"
        if not ranked:
            return "group too split to trust: no member has an answer"
        if self.mode == "binary" and self.ties == "skip" and len(ranked) > 1 and ranked[0] == ranked[1]:
            return f"group too split to trust: two answers tie with {ranked[0]} vote(s) each (ties = 'first' takes the first)"
        if agreement < self.min_agreement:
            return f"group too split to trust: majority holds {agreement:.2f} < min_agreement {self.min_agreement:g}"
        return None

    def _member_result(
        self, label: int | None, answer: str | None, majority: int, sizes: Sequence[int], n: int, shared: Mapping[str, JSON]
    ) -> RewardResult:
        in_majority = label == majority
        if self.mode == "binary":
            score = 1.0 if in_majority else 0.0
        elif label is None:
            score = 0.0
        elif self.mode == "frequency":
            score = sizes[label] / n
        else:  # entropy: 1 + log p / log N; n >= min_group >= 2, so log N > 0
            score = max(0.0, 1.0 + math.log(sizes[label] / n) / math.log(n))
        return RewardResult.ok(score, info={**shared, "answer": answer, "in_majority": in_majority})
