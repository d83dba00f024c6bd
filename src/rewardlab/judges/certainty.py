"""Label-free rewards from the policy's own token distribution: self-certainty and entropy.

The per-token log-probabilities come with the sample, in `meta["logprobs"]` (key configurable),
in the OpenAI / vLLM chat-completions shape:

    {"content": [{"token": "4", "logprob": -0.01,
                  "top_logprobs": [{"token": "4", "logprob": -0.01}, {"token": "5", "logprob": -4.7}]}, ...]}

or as a bare list of those per-token entries.

Self-certainty (Kang, Zhao & Song 2025, "Scalable Best-of-N Selection for Large Language Models
via Self-Certainty", arXiv:2502.18581, eq. 3; used as the RL reward of INTUITOR, Zhao et al.
2025, arXiv:2505.19590) is the mean over tokens of KL(U || p_i), the divergence of the
next-token distribution from uniform: `-1/(nV) sum_i sum_j log(V p_ij)`. Endpoints return only
the top-k alternatives, so here the sum runs over the k returned tokens with p renormalised
over them (`KL(U_k || p_k) = -log k - (1/k) sum_j log p_j`): exact when the top-k hold all the
mass, an approximation (over the tail the model hides) otherwise. Both rewards need k >= 2
alternatives per token; rows without usable logprobs are `invalid_input` errors, never 0.

Token entropy: `labelfree.entropy` scores `-mean_i H(p_i)` (higher = more certain), the
entropy-minimisation reward of Agarwal et al. 2025 ("The Unreasonable Effectiveness of Entropy
Minimization in LLM Reasoning", arXiv:2505.15134), over the same renormalised top-k.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rewardlab.core import BaseReward, RewardResult, Sample
from rewardlab.errors import ConfigError, ScoringError

__all__ = ["Entropy", "SelfCertainty", "token_distributions"]


def token_distributions(logprobs: Any, *, min_alternatives: int = 2) -> list[list[float]]:
    """Per token, the renormalised probabilities of its top-k alternatives.

    Raises:
        ScoringError: `invalid_input`, when `logprobs` is not in the OpenAI shape or a token has
            fewer than `min_alternatives` alternatives (ask the endpoint for `top_logprobs`).
    """
    entries = logprobs.get("content") if isinstance(logprobs, dict) else logprobs
    if not isinstance(entries, list) or not entries:
        raise ScoringError("invalid_input", "no token logprobs: pass the endpoint's `logprobs` object (request logprobs=true, top_logprobs>=2)")
    out: list[list[float]] = []
    for position, entry in enumerate(entries):
        top = entry.get("top_logprobs") if isinstance(entry, dict) else None
        if not isinstance(top, list) or len(top) < min_alternatives:
            raise ScoringError("invalid_input", f"token {position} has {len(top) if isinstance(top, list) else 0} top_logprobs; need >= {min_alternatives} (request top_logprobs)")
        try:
            values = [float(alt["logprob"]) for alt in top]
        except (KeyError, TypeError, ValueError) as exc:
            raise ScoringError("invalid_input", f"token {position}: top_logprobs entries need a numeric `logprob` ({exc})") from exc
        peak = max(values)  # log-sum-exp, shifted for stability
        weights = [math.exp(v - peak) for v in values]
        total = sum(weights)
        out.append([w / total for w in weights])
    return out


def _self_certainty(dist: Sequence[float]) -> float:
    k = len(dist)
    return -math.log(k) - sum(math.log(max(p, 1e-300)) for p in dist) / k


def _entropy(dist: Sequence[float]) -> float:
    return -sum(p * math.log(p) for p in dist if p > 0)


class _TokenReward(BaseReward):
    def __init__(self, *, logprobs_key: str = "logprobs"):
        if not logprobs_key:
            raise ConfigError("logprobs_key must name a meta field")
        self.logprobs_key = logprobs_key

    def _dists(self, sample: Sample) -> list[list[float]]:
        if self.logprobs_key not in sample.meta:
            raise ScoringError("invalid_input", f"{self.name} needs token logprobs in meta[{self.logprobs_key!r}]")
        return token_distributions(sample.meta[self.logprobs_key])


class SelfCertainty(_TokenReward):
    """Mean KL(uniform || next-token distribution) over the response tokens (Kang et al. 2025).

    Args:
        logprobs_key: the `meta` field holding the OpenAI-shaped logprobs.
    """

    name = "labelfree.self_certainty"
    range = (0.0, math.inf)

    def compute(self, sample: Sample) -> RewardResult:
        dists = self._dists(sample)
        values = [_self_certainty(d) for d in dists]
        return RewardResult.ok(sum(values) / len(values), info={"tokens": len(values), "min_token": min(values)})


class Entropy(_TokenReward):
    """Negative mean next-token entropy (nats) over the response tokens: higher is more certain.

    Args:
        logprobs_key: the `meta` field holding the OpenAI-shaped logprobs.
    """

    name = "labelfree.entropy"
    range = (-math.inf, 0.0)

    def compute(self, sample: Sample) -> RewardResult:
        dists = self._dists(sample)
        values = [_entropy(d) for d in dists]
        mean = sum(values) / len(values)
        return RewardResult.ok(-mean, info={"tokens": len(values), "mean_entropy": mean, "max_entropy": max(values)})
