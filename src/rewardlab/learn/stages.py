"""Stage-structured rewards: DrS (stage index + a bounded discriminator score) and a stage classifier.

DrS, Mu, Liu & Su, "DrS: Learning Reusable Dense Rewards for Multi-Stage Tasks" (ICLR 2024):
a task is a sequence of stages; for each stage k a discriminator D_k separates the states of
trajectories that went beyond stage k from the states of trajectories that stopped in it, and
the reward of entering s' is

    r(s') = k(s') + alpha * tanh(D_k(s'))            (k(s'): the stage of s', D_k: logits)

With 0 < alpha < 1/2 every stage owns the band [k - alpha, k + alpha], so any state of a later
stage earns more than any state of an earlier one, whatever the discriminators say; within a
stage the discriminator says how much a state looks like the successful runs. The stage of
the last band (the task done) has nothing to discriminate and earns its top, K - 1 + alpha.

The paper reads k(s') off the environment's stage indicators; here it is read off a
`StageClassifier` fit on the demonstrations' own `stages` (on observations that encode the
stage, as the office world's reward-machine units do, it is exact).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from rewardlab.errors import ConfigError, InputError, TrainingError
from rewardlab.learn._mlp import MLP, fit_mlp
from rewardlab.learn.base import DemoReward, as_rows
from rewardlab.learn.demos import DemoSet

__all__ = ["DrSStageReward", "StageClassifier"]


def _stage_rows(demos: DemoSet, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(observations, stage of each, highest stage its demo reached) over every state of `demos`."""
    if any(d.stages is None for d in demos.demos):
        raise ConfigError(f"{name}: every demonstration needs `stages` (the subtask index of each state)")
    obs = np.concatenate([d.observations for d in demos.demos])
    stages = np.concatenate([np.asarray(d.stages) for d in demos.demos])
    reached = np.concatenate([np.full(len(d) + 1, int(np.max(np.asarray(d.stages)))) for d in demos.demos])
    return obs, stages.astype(np.int64), reached


class StageClassifier:
    """Which stage an observation is in: a softmax-free MLP over K stages (argmax of K logits)."""

    def __init__(self, net: MLP, n_stages: int):
        self.net, self.n_stages = net, n_stages

    @classmethod
    def fit(cls, obs: np.ndarray, stages: np.ndarray, *, seed: int = 0, epochs: int = 60) -> StageClassifier:
        k = int(stages.max()) + 1
        if stages.min() < 0:
            raise ConfigError("stages must be >= 0")
        return cls(fit_mlp(obs, np.eye(k)[stages], loss="bce", hidden=(32,), epochs=epochs, seed=seed), k)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """(N,) stage index of each row."""
        return self.net(obs).argmax(axis=1)  # type: ignore[no-any-return]


class DrSStageReward(DemoReward):
    """DrS stage reward; fit with `DrSStageReward.fit(successes, failures)`.

    Args:
        classifier: the stage of an observation.
        discriminators: D_k for k = 0 .. K - 2 (logit MLPs).
        alpha: the half-width of each stage's band, in (0, 1/2).
    """

    kind: ClassVar[str] = "drs_stages"

    def __init__(self, classifier: StageClassifier, discriminators: list[MLP], *, alpha: float, dim: int):
        if not 0.0 < alpha < 0.5:
            raise ConfigError(f"alpha must be in (0, 0.5) so stage bands do not overlap, got {alpha}")
        if len(discriminators) != classifier.n_stages - 1:
            raise ConfigError(f"need one discriminator per stage but the last: {classifier.n_stages - 1}, got {len(discriminators)}")
        self.classifier, self.discriminators, self.alpha, self.dim = classifier, discriminators, alpha, dim

    @classmethod
    def fit(cls, successes: DemoSet, failures: DemoSet, *, alpha: float = 1 / 3, epochs: int = 60,
            seed: int = 0) -> DrSStageReward:  # fmt: skip
        """Fit D_k on states of stage k: positives from runs that went beyond k, negatives from runs
        that stopped in k (both sets may hold either kind; `Demo.stages` decides).

        Raises:
            TrainingError: a stage has no positive or no negative states to tell apart.
        """
        obs_s, st_s, top_s = _stage_rows(successes, "successes")
        obs_f, st_f, top_f = _stage_rows(failures, "failures")
        obs, stages, reached = np.vstack([obs_s, obs_f]), np.concatenate([st_s, st_f]), np.concatenate([top_s, top_f])
        classifier = StageClassifier.fit(obs, stages, seed=seed)
        nets = []
        for k in range(classifier.n_stages - 1):
            here = stages == k
            pos, neg = obs[here & (reached > k)], obs[here & (reached == k)]
            if len(pos) == 0 or len(neg) == 0:
                raise TrainingError(f"stage {k}: need states of runs that went beyond it ({len(pos)}) and of runs "
                                    f"that stopped in it ({len(neg)}); add failed rollouts that stop in stage {k}")  # fmt: skip
            x = np.vstack([pos, neg])
            y = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
            nets.append(fit_mlp(x, y, loss="bce", hidden=(32,), epochs=epochs, seed=seed + 1 + k))
        return cls(classifier, nets, alpha=alpha, dim=successes.dim)

    def state_reward(self, obs: Any) -> np.ndarray:
        """(N,) r(s) = k(s) + alpha * tanh(D_k(s)); the final stage earns K - 1 + alpha."""
        x = as_rows(obs, "obs", self.dim)
        k = self.classifier(x)
        bonus = np.full(len(x), 1.0)
        for j, net in enumerate(self.discriminators):
            rows = k == j
            if rows.any():
                bonus[rows] = np.tanh(net(x[rows])[:, 0])
        return k + self.alpha * bonus

    def reward(self, obs: Any, next_obs: Any, actions: Any = None) -> np.ndarray:
        """The DrS reward of entering `next_obs`."""
        return self.state_reward(next_obs)

    def potential(self, obs: Any) -> np.ndarray:
        """The stage reward of a state, normalised to [0, 1] over the K bands (for shaping)."""
        return (self.state_reward(obs) + self.alpha) / (self.classifier.n_stages - 1 + 2 * self.alpha)

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        arrays = self.classifier.net.arrays("classifier")
        for k, net in enumerate(self.discriminators):
            arrays.update(net.arrays(f"d{k}"))
        return {"alpha": self.alpha, "dim": self.dim, "n_stages": self.classifier.n_stages}, arrays

    @classmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray], *, source: str) -> DrSStageReward:
        k = int(config["n_stages"])
        if k < 2:
            raise InputError(f"a DrS reward needs >= 2 stages, the file says {k}", source=source)
        classifier = StageClassifier(MLP.from_arrays("classifier", arrays, source=source), k)
        nets = [MLP.from_arrays(f"d{j}", arrays, source=source) for j in range(k - 1)]
        return cls(classifier, nets, alpha=float(config["alpha"]), dim=int(config["dim"]))
