"""Progress learned from demonstrations: temporal distance (TimeRewarder) and subtask budgets.

`TemporalDistanceProgress` follows TimeRewarder (Liu, Wen, Hu, Jayaraman & Gao, "TimeRewarder:
Learning Dense Reward from Passive Videos via Frame-wise Temporal Distance", arXiv 2509.26627):
a model F(o_u, o_v) is trained on frame pairs of expert trajectories to predict their signed
temporal distance, and the reward of a step is the predicted distance it covers,

    r_t = F(o_t, o_{t+1}),        F(o_u, o_v) ~ (v - u) / H          (negative when going back)

Two departures, both for low-dimensional states rather than videos: F is regressed with a
squared loss (the paper discretises the target into two-hot bins for its ViT), and distances
are normalised by one horizon H, the longest demonstration, instead of each video's own length,
so that demonstrations starting at different distances from the goal agree on what one step
is worth. The progress of a state is then `1 - F(o, goal)` (goal: the mean last observation of
the demonstrations): 0 about H steps from the goal, 1 at it; it is the potential for shaping.

`SubtaskBudgetProgress` gives each subtask a progress budget, the ProcVLM-style split of total
progress over the stages of a task: subtask k owns b_k = the mean share of demonstration time
spent in it, and a state of stage k has progress

    p(s) = sum_{j < k} b_j + b_k * q(s),     q(s) = 1 - min(steps left in stage k / L_k, 1)

with q regressed on the demonstrations (L_k: the longest stage-k segment), so progress never
leaves its stage's budget and each subtask counts in proportion to its length.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from rewardlab.errors import ConfigError, InputError
from rewardlab.learn._mlp import MLP, fit_mlp
from rewardlab.learn.base import DemoReward, as_rows
from rewardlab.learn.demos import DemoSet
from rewardlab.learn.stages import StageClassifier, _stage_rows

__all__ = ["SubtaskBudgetProgress", "TemporalDistanceProgress"]


class TemporalDistanceProgress(DemoReward):
    """TimeRewarder-style temporal distance F and the progress `1 - F(o, goal)`; see the module docstring."""

    kind: ClassVar[str] = "temporal_distance"

    def __init__(self, net: MLP, goal: np.ndarray, horizon: int):
        self.net, self.goal, self.horizon = net, np.asarray(goal, dtype=np.float64), int(horizon)
        self.dim = len(self.goal)

    @classmethod
    def fit(cls, demos: DemoSet, *, pairs: int = 6000, hidden: tuple[int, ...] = (64, 64), epochs: int = 40,
            seed: int = 0) -> TemporalDistanceProgress:  # fmt: skip
        """Regress F on `pairs` random frame pairs (both orders) plus every frame with its demo's last."""
        if pairs < 1:
            raise ConfigError(f"need pairs >= 1, got {pairs}")
        rng = np.random.default_rng(seed)
        H = max(len(d) for d in demos.demos)
        if H == 0:
            raise ConfigError("every demonstration is empty (no steps): no temporal distance to learn")
        a, b, y = [], [], []
        for _ in range(pairs):
            d = demos.demos[int(rng.integers(len(demos)))]
            u, v = rng.integers(0, len(d) + 1, size=2)
            a.append(d.observations[u])
            b.append(d.observations[v])
            y.append((v - u) / H)
        for d in demos.demos:  # every frame to its goal: what the progress reads
            a.extend(d.observations)
            b.extend([d.observations[-1]] * (len(d) + 1))
            y.extend((len(d) - np.arange(len(d) + 1)) / H)
        x = np.hstack([np.array(a), np.array(b)])
        net = fit_mlp(x, np.array(y), hidden=hidden, epochs=epochs, seed=seed)
        goal = np.mean([d.observations[-1] for d in demos.demos], axis=0)
        return cls(net, goal, H)

    def distance(self, obs: Any, other: Any) -> np.ndarray:
        """(N,) F(obs, other): predicted steps from `obs` to `other`, over H."""
        x, y = as_rows(obs, "obs", self.dim), as_rows(other, "other", self.dim)
        if len(y) == 1 and len(x) > 1:
            y = np.repeat(y, len(x), axis=0)
        return np.asarray(self.net(np.hstack([x, y]))[:, 0])

    def reward(self, obs: Any, next_obs: Any, actions: Any = None) -> np.ndarray:
        """TimeRewarder's step reward F(o_t, o_{t+1}), clipped to [-1, 1]."""
        return np.asarray(np.clip(self.distance(obs, next_obs), -1.0, 1.0))

    def potential(self, obs: Any) -> np.ndarray:
        """Progress `1 - F(o, goal)`, clipped to [0, 1]."""
        return np.clip(1.0 - self.distance(obs, self.goal[None]), 0.0, 1.0)

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return {"horizon": self.horizon}, {"goal": self.goal, **self.net.arrays("F")}

    @classmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray], *, source: str) -> TemporalDistanceProgress:
        net = MLP.from_arrays("F", arrays, source=source)
        if net.weights[0].shape[0] != 2 * len(arrays["goal"]):
            raise InputError("saved temporal-distance net does not take (obs, other) pairs of the goal's size", source=source)
        return cls(net, arrays["goal"], int(config["horizon"]))


class SubtaskBudgetProgress(DemoReward):
    """Progress with a budget per subtask; see the module docstring. Reward: p(s') - p(s)."""

    kind: ClassVar[str] = "subtask_budgets"

    def __init__(self, classifier: StageClassifier, within: MLP, budgets: np.ndarray, dim: int):
        b = np.asarray(budgets, dtype=np.float64)
        if b.shape != (classifier.n_stages - 1,) or (b < 0).any() or not np.isclose(b.sum(), 1.0):
            raise ConfigError(f"need {classifier.n_stages - 1} non-negative budgets summing to 1, got {b}")
        self.classifier, self.within, self.budgets, self.dim = classifier, within, b, dim

    @classmethod
    def fit(cls, demos: DemoSet, *, epochs: int = 40, seed: int = 0) -> SubtaskBudgetProgress:
        """Budgets from the demonstrations' time per stage; q regressed on steps left in each stage."""
        obs, stages, _ = _stage_rows(demos, "demos")
        K = int(stages.max()) + 1
        if K < 2:
            raise ConfigError("the demonstrations never leave stage 0: no subtasks to budget")
        share, longest = np.zeros(K - 1), np.ones(K - 1)
        left = []
        for d in demos.demos:
            st = np.asarray(d.stages)
            share += np.bincount(st[:-1], minlength=K)[: K - 1] / max(len(d), 1)
            t_left, change = np.zeros(len(st)), len(st) - 1
            for t in range(len(st) - 1, -1, -1):  # steps until the stage changes (to the end in the last stage)
                if t < len(st) - 1 and st[t + 1] != st[t]:
                    change = t + 1
                t_left[t] = change - t
                if st[t] < K - 1:
                    longest[st[t]] = max(longest[st[t]], t_left[t])
            left.append(t_left)
        t_left_all = np.concatenate(left)
        q = 1.0 - np.minimum(t_left_all / longest[np.minimum(stages, K - 2)], 1.0)
        q[stages == K - 1] = 1.0
        classifier = StageClassifier.fit(obs, stages, seed=seed)
        within = fit_mlp(obs, q, hidden=(64, 64), epochs=epochs, seed=seed + 1)
        return cls(classifier, within, share / share.sum(), demos.dim)

    def potential(self, obs: Any) -> np.ndarray:
        """Progress p(s) in [0, 1]."""
        x = as_rows(obs, "obs", self.dim)
        k = self.classifier(x)
        before = np.concatenate([[0.0], np.cumsum(self.budgets)])
        q = np.clip(self.within(x)[:, 0], 0.0, 1.0)
        top = k >= len(self.budgets)
        own = np.where(top, 0.0, self.budgets[np.minimum(k, len(self.budgets) - 1)])
        return np.where(top, 1.0, before[np.minimum(k, len(self.budgets))] + own * q)

    def reward(self, obs: Any, next_obs: Any, actions: Any = None) -> np.ndarray:
        """Progress made: p(s') - p(s)."""
        return np.asarray(self.potential(next_obs) - self.potential(obs))

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        arrays = {"budgets": self.budgets, **self.classifier.net.arrays("classifier"), **self.within.arrays("q")}
        return {"dim": self.dim, "n_stages": self.classifier.n_stages}, arrays

    @classmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray], *, source: str) -> SubtaskBudgetProgress:
        classifier = StageClassifier(MLP.from_arrays("classifier", arrays, source=source), int(config["n_stages"]))
        try:
            return cls(classifier, MLP.from_arrays("q", arrays, source=source), arrays["budgets"], int(config["dim"]))
        except ConfigError as exc:
            raise InputError(str(exc), source=source) from exc
