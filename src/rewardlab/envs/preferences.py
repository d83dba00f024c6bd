"""Preference-based reward learning: segment comparisons, B-Pref teachers, Bradley-Terry.

- Synthetic teachers with the B-Pref parameters (Lee, Smith, Dragan, Abbeel, "B-Pref:
  Benchmarking Preference-Based Reinforcement Learning", NeurIPS 2021 datasets track):
  rationality `beta`, myopia `gamma`, mistake probability `eps`, `skip` and `equal` thresholds.
- A Bradley-Terry model over summed per-step rewards (Christiano et al. 2017, eq. 1):
  P(seg1 > seg2) = exp(sum r(seg1)) / (exp(sum r(seg1)) + exp(sum r(seg2))), with r a linear
  map or a small torch MLP of per-step features; an ensemble gives disagreement.
- Disagreement-based query selection (the ensemble's std of P, as in PEBBLE).
- `LearnedRewardWrapper`: a Gymnasium wrapper that swaps in the learned reward.

torch is imported lazily, inside the model, so the teachers work without it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import gymnasium as gym
    import numpy as np
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab._seeding import torch_seeded
from rewardlab.core.numbers import refuse_nan
from rewardlab.envs.persist import load_state, module_arrays, save_state, set_module_arrays
from rewardlab.errors import SpecError

__all__ = [
    "GridPreferenceResult",
    "LearnedRewardWrapper",
    "PreferenceDataset",
    "PreferenceRewardModel",
    "RewardNormalizer",
    "SyntheticTeacher",
    "TeacherConfig",
    "bradley_terry_loss",
    "collect_segments",
    "learn_grid_reward",
    "normalised_policy_return",
    "normalised_return",
    "preference_grid",
    "random_segments",
    "select_queries",
]


@dataclass(frozen=True)
class TeacherConfig:
    """B-Pref teacher parameters (Lee et al. 2021, sec. 3.1); defaults are the oracle.

    Attributes:
        beta: rationality; P(prefer 1) = sigmoid(beta * (R1 - R2)). `inf` = always the better.
        gamma: myopia; step t of H is weighted gamma ** (H - 1 - t) (recent steps count more).
        eps: probability of flipping the answer (a mistake).
        skip: skip the query when both segments' returns are below this threshold.
        equal: answer 0.5 ("equally good") when the returns differ by less than this.
    """

    beta: float = math.inf
    gamma: float = 1.0
    eps: float = 0.0
    skip: float = -math.inf
    equal: float = 0.0

    def __post_init__(self) -> None:
        refuse_nan(self)
        if not (self.beta > 0 and 0 < self.gamma <= 1 and 0 <= self.eps <= 1 and self.equal >= 0):
            raise SpecError(f"invalid teacher {self}: need beta > 0, 0 < gamma <= 1, 0 <= eps <= 1, equal >= 0")


class SyntheticTeacher:
    """Answers segment comparisons from true per-step rewards, with B-Pref irrationalities."""

    def __init__(self, config: TeacherConfig | None = None, *, seed: int = 0):
        self.config = config or TeacherConfig()
        self.rng = np.random.default_rng(seed)

    def label(self, rewards1: np.ndarray, rewards2: np.ndarray) -> np.ndarray:
        """Labels for N comparisons of segments with true rewards (N, H) each.

        Returns:
            (N,) float array: 1.0 prefers segment 1, 0.0 segment 2, 0.5 equal, NaN skipped.
        """
        c = self.config
        r1, r2 = np.atleast_2d(rewards1), np.atleast_2d(rewards2)
        if r1.shape != r2.shape:
            raise SpecError(f"segments must have the same shape, got {r1.shape} and {r2.shape}")
        H = r1.shape[1]
        w = c.gamma ** np.arange(H - 1, -1, -1)
        R1, R2 = r1 @ w, r2 @ w
        if math.isinf(c.beta):
            out = (R1 > R2).astype(float)
            out[R1 == R2] = 0.5
        else:
            p = 1.0 / (1.0 + np.exp(-c.beta * (R1 - R2)))
            out = (self.rng.random(len(p)) < p).astype(float)
        flip = self.rng.random(len(out)) < c.eps
        out = np.where(flip & (out != 0.5), 1.0 - out, out)
        out[np.abs(R1 - R2) < c.equal] = 0.5
        out[np.maximum(r1.sum(1), r2.sum(1)) < c.skip] = np.nan
        return out


@dataclass
class PreferenceDataset:
    """Comparisons: features (N, H, F) of both segments and labels (N,) in [0, 1]."""

    feats1: np.ndarray
    feats2: np.ndarray
    labels: np.ndarray

    def __post_init__(self) -> None:
        if not (self.feats1.shape == self.feats2.shape and self.feats1.ndim == 3 and len(self.labels) == len(self.feats1)):
            raise SpecError(
                f"need feats1, feats2 of equal shape (N, H, F) and N labels; got {self.feats1.shape}, "
                f"{self.feats2.shape}, {self.labels.shape}"
            )

    def answered(self) -> PreferenceDataset:
        """Drop skipped comparisons (NaN labels)."""
        keep = ~np.isnan(self.labels)
        return PreferenceDataset(self.feats1[keep], self.feats2[keep], self.labels[keep])

    def __len__(self) -> int:
        return len(self.labels)


def bradley_terry_loss(sum1: Any, sum2: Any, labels: Any) -> Any:
    """Cross-entropy of P(1 > 2) = sigmoid(sum1 - sum2) against (soft) labels (torch tensors)."""
    import torch.nn.functional as F

    return F.binary_cross_entropy_with_logits(sum1 - sum2, labels)


class PreferenceRewardModel:
    """An ensemble of per-step reward models r(features) trained with Bradley-Terry.

    `hidden=0` is a linear reward r = w . phi, trained in numpy by full-batch gradient descent
    on the exact Bradley-Terry gradient (fast, no torch); `hidden > 0` is a 2-layer torch MLP
    trained with Adam. Each member sees a bootstrap resample of the comparisons, so the
    ensemble's disagreement reflects what the data leave open.

    Args:
        n_features: size of the per-step feature vector.
        hidden: 0 for a linear reward, else the width of the MLP.
        ensemble: number of members (disagreement-based selection needs >= 2).
        seed: seed for initialisation and bootstrap resamples.
    """

    def __init__(self, n_features: int, *, hidden: int = 0, ensemble: int = 3, seed: int = 0):
        if n_features < 1 or ensemble < 1 or hidden < 0:
            raise SpecError(f"need n_features >= 1, ensemble >= 1, hidden >= 0; got {n_features}, {ensemble}, {hidden}")
        self.n_features, self.hidden, self.ensemble = n_features, hidden, ensemble
        self.rng = np.random.default_rng(seed)
        self.weights = self.rng.normal(0.0, 0.01, (ensemble, n_features))  # linear members
        self.members: list[Any] = []
        if hidden:
            from torch import nn

            with torch_seeded(seed):  # seeded initial weights without resetting the caller's generator
                self.members = [
                    nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
                    for _ in range(ensemble)
                ]

    def fit(self, data: PreferenceDataset, *, epochs: int = 300, lr: float | None = None, l2: float = 1e-3) -> list[float]:
        """Train every member on a bootstrap resample of the answered comparisons.

        Returns the final Bradley-Terry loss of each member on its resample.
        """
        data = data.answered()
        if len(data) == 0:
            raise SpecError("no answered comparisons to train on (all skipped?)")
        # summed per-step features: the linear model only needs Phi(seg) = sum_t phi_t
        losses = []
        for k in range(self.ensemble):
            idx = self.rng.integers(0, len(data), len(data)) if self.ensemble > 1 else np.arange(len(data))
            if self.hidden:
                losses.append(self._fit_torch(k, data, idx, epochs, lr or 1e-2, l2))
            else:
                losses.append(self._fit_linear(k, data, idx, epochs, lr or 0.5, l2))
        return losses

    def _fit_linear(self, k: int, data: PreferenceDataset, idx: np.ndarray, epochs: int, lr: float, l2: float) -> float:
        d = (data.feats1[idx].sum(1) - data.feats2[idx].sum(1)).astype(np.float64)  # (N, F)
        y = data.labels[idx]
        w = self.weights[k].copy()
        for _ in range(epochs):
            p = 1.0 / (1.0 + np.exp(-(d @ w)))
            w -= lr * (d.T @ (p - y) / len(y) + l2 * w)  # gradient of BT cross-entropy + L2
        self.weights[k] = w
        z = d @ w
        return float(np.mean(np.logaddexp(0.0, z) - y * z))

    def _fit_torch(self, k: int, data: PreferenceDataset, idx: np.ndarray, epochs: int, lr: float, l2: float) -> float:
        import torch

        m = self.members[k]
        f1 = torch.as_tensor(data.feats1[idx], dtype=torch.float32)
        f2 = torch.as_tensor(data.feats2[idx], dtype=torch.float32)
        y = torch.as_tensor(data.labels[idx], dtype=torch.float32)
        opt = torch.optim.Adam(m.parameters(), lr=lr, weight_decay=l2)
        for _ in range(epochs):
            opt.zero_grad()
            loss = bradley_terry_loss(m(f1).squeeze(-1).sum(-1), m(f2).squeeze(-1).sum(-1), y)
            loss.backward()
            opt.step()
        return float(loss.detach())

    def _member_rewards(self, feats: np.ndarray) -> np.ndarray:
        feats = np.asarray(feats, dtype=np.float32)
        if not self.hidden:
            return np.einsum("...f,kf->k...", feats, self.weights)  # type: ignore[no-any-return]
        import torch

        x = torch.as_tensor(feats)
        with torch.no_grad():
            return np.stack([m(x).squeeze(-1).numpy() for m in self.members])

    def save(self, path: str | Path) -> None:
        """Write the configuration and every member's weights to an `.npz` file (`load` reads it)."""
        arrays = {"weights": self.weights}
        for k, member in enumerate(self.members):
            arrays.update(module_arrays(f"member{k}", member))
        config = {"n_features": self.n_features, "hidden": self.hidden, "ensemble": self.ensemble}
        save_state(path, "PreferenceRewardModel", config, arrays)

    @classmethod
    def load(cls, path: str | Path) -> PreferenceRewardModel:
        """The model saved at `path`; it predicts exactly what the saved one did."""
        config, arrays = load_state(path, "PreferenceRewardModel")
        model = cls(int(config["n_features"]), hidden=int(config["hidden"]), ensemble=int(config["ensemble"]))
        model.weights = arrays["weights"]
        for k, member in enumerate(model.members):
            set_module_arrays(f"member{k}", member, arrays, source=str(path))
        return model

    def reward(self, feats: np.ndarray) -> np.ndarray:
        """Mean predicted reward over the ensemble, shape `feats.shape[:-1]`."""
        return self._member_rewards(feats).mean(axis=0)  # type: ignore[no-any-return]

    def preference_probs(self, feats1: np.ndarray, feats2: np.ndarray) -> np.ndarray:
        """P(seg1 > seg2) per member: (ensemble, N)."""
        s1 = self._member_rewards(feats1).sum(-1)
        s2 = self._member_rewards(feats2).sum(-1)
        return 1.0 / (1.0 + np.exp(-(s1 - s2)))  # type: ignore[no-any-return]


@dataclass(frozen=True)
class RewardNormalizer:
    """The affine map `(r - shift) / scale` applied to a learned reward before an agent sees it.

    Bradley-Terry on equal-length segments does not identify a constant offset of the reward
    (adding c to every step adds H*c to both segments' sums), and Christiano et al. (2017,
    sec. 2.2.1) normalise the learned reward's output to zero mean and a fixed standard deviation.
    In a continuing or time-limited task an offset leaves optimal policies unchanged, yet it
    decides how a learner with zero-initialised values explores: where most learned rewards
    are positive, zero initial values are pessimistic, and epsilon-greedy Q-learning settles in
    the first loop of positive cells it finds (dense positive local maxima) although value
    iteration on the same reward finds the goal. `mode="nonpositive"` (the default) shifts the
    largest reward to 0, so zero initial values are optimistic for every action (Sutton &
    Barto 2018, sec. 2.6) and the learner explores until it finds the best cells;
    `mode="zero_mean"` is Christiano et al.'s normalisation. Both divide by the standard
    deviation. An offset does change optimal policies of tasks with terminal states (living
    longer pays or costs), so use it on continuing or time-limited tasks.

    Fit it on the learned rewards of the steps the agent will see (e.g. every state, or a
    replay buffer's transitions).
    """

    shift: float
    scale: float

    @classmethod
    def fit(cls, rewards: np.ndarray, *, mode: str = "nonpositive") -> RewardNormalizer:
        r = np.asarray(rewards, dtype=np.float64).reshape(-1)
        if r.size == 0 or not np.isfinite(r).all():
            raise SpecError("RewardNormalizer.fit needs a non-empty array of finite rewards")
        if mode not in ("nonpositive", "zero_mean"):
            raise SpecError(f"RewardNormalizer mode must be 'nonpositive' or 'zero_mean', got {mode!r}")
        scale = float(r.std()) or 1.0
        return cls(float(r.max() if mode == "nonpositive" else r.mean()), scale)

    def __call__(self, rewards: np.ndarray) -> np.ndarray:
        return (np.asarray(rewards, dtype=np.float64) - self.shift) / self.scale


def select_queries(
    model: PreferenceRewardModel | None,
    feats1: np.ndarray,
    feats2: np.ndarray,
    k: int,
    *,
    method: str = "disagreement",
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """Indices of the `k` candidate pairs to ask about.

    `"disagreement"` picks the pairs whose ensemble members disagree most (std of P);
    `"uniform"` picks at random (also used while no model exists yet).
    """
    rng = rng or np.random.default_rng(0)
    n = len(feats1)
    k = min(k, n)
    if method == "uniform" or model is None:
        return rng.choice(n, size=k, replace=False)
    if method != "disagreement":
        raise SpecError(f"unknown query selection {method!r}; use 'disagreement' or 'uniform'")
    if model.ensemble < 2:
        raise SpecError("disagreement-based selection needs an ensemble of at least 2 members")
    spread = model.preference_probs(feats1, feats2).std(axis=0)
    return np.argsort(-spread, kind="stable")[:k]


class LearnedRewardWrapper(gym.Wrapper):
    """Replaces the env reward with `model.reward(featurize(obs, action, next_obs))`,
    mapped through `normalizer` when one is given (see `RewardNormalizer`).

    The env's own reward stays in `info["reward/env"]`; the learned one is `info["reward/learned"]`.
    """

    def __init__(self, env: gym.Env, model: PreferenceRewardModel, featurize: Callable[[Any, Any, Any], np.ndarray],
                 *, normalizer: RewardNormalizer | None = None):
        super().__init__(env)
        self.model, self.featurize, self.normalizer = model, featurize, normalizer
        self._obs: Any = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._obs, info = self.env.reset(**kwargs)
        return self._obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, r, term, trunc, info = self.env.step(action)
        raw = self.model.reward(self.featurize(self._obs, action, obs)[None])
        learned = float((self.normalizer(raw) if self.normalizer is not None else raw)[0])
        info["reward/env"], info["reward/learned"] = r, learned
        self._obs = obs
        return obs, learned, term, trunc, info


def random_segments(mdp: Any, n: int, horizon: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """`n` random-walk segments on a `GridMDP`: one-hot features of the cell entered (n, H, S)
    and the true rewards (n, H). Segments start in uniformly random cells."""
    S = mdp.n_states
    s = rng.integers(0, S, n)
    cells = np.zeros((n, horizon), dtype=np.int64)
    for t in range(horizon):
        s = mdp.next_state[s, rng.integers(0, 4, n)]
        cells[:, t] = s
    return np.eye(S, dtype=np.float32)[cells], mdp.reward[cells]


def collect_segments(
    env: gym.Env,
    n: int,
    horizon: int,
    featurize: Callable[[Any, Any, Any], np.ndarray],
    *,
    policy: Any = None,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """`n` segments of `horizon` consecutive steps from any Gymnasium env, for preference queries.

    Args:
        env: the env; its reward (or `info["reward/env"]` when a reward wrapper swapped it)
            is the true reward a synthetic teacher answers from.
        n: number of segments.
        horizon: steps per segment; episodes are cut into consecutive windows and a window an
            episode end would cut short is dropped.
        featurize: `(obs, action, next_obs) -> (F,)` per-step features the reward model reads.
        policy: None (uniformly random actions), a callable `obs -> action`, or a
            Stable-Baselines3 model (anything with `predict(obs)`), e.g. the agent being trained.
        seed: seeds the env's first reset and the random actions.

    Returns:
        features (n, horizon, F) float32 and true rewards (n, horizon).
    """
    if n < 1 or horizon < 1:
        raise SpecError(f"collect_segments needs n >= 1 and horizon >= 1, got {n}, {horizon}")
    env.action_space.seed(seed)
    act: Callable[[Any], Any]
    if policy is None:
        act = lambda _obs: env.action_space.sample()  # noqa: E731
    elif hasattr(policy, "predict"):
        act = lambda obs: policy.predict(obs, deterministic=False)[0]  # noqa: E731
    else:
        act = policy
    feats: list[np.ndarray] = []
    rewards: list[np.ndarray] = []
    obs, _ = env.reset(seed=seed)
    window_f: list[np.ndarray] = []
    window_r: list[float] = []
    while len(feats) < n:
        action = act(obs)
        nxt, r, term, trunc, info = env.step(action)
        window_f.append(np.asarray(featurize(obs, action, nxt), dtype=np.float32))
        window_r.append(float(info.get("reward/env", r)))
        obs = nxt
        if len(window_f) == horizon:
            feats.append(np.stack(window_f))
            rewards.append(np.asarray(window_r))
            window_f, window_r = [], []
        if term or trunc:
            obs, _ = env.reset()
            window_f, window_r = [], []
    return np.stack(feats), np.stack(rewards)


@dataclass(frozen=True)
class GridPreferenceResult:
    """Outcome of `learn_grid_reward`: labels used, learned reward (S,), normalised return."""

    labels: int
    reward: np.ndarray
    normalised_return: float


def normalised_policy_return(mdp: Any, policy: np.ndarray, *, gamma: float = 0.95) -> float:
    """True value at `start` of a deterministic `policy` (S,), scaled so that the uniformly
    random policy is 0 and the true optimal policy is 1."""
    from rewardlab.envs.gridworld import policy_value, value_iteration

    r_sa, done = mdp.transition_rewards(), mdp.done_mask()
    v = np.zeros(mdp.n_states)
    for _ in range(3000):
        v = (r_sa + gamma * np.where(done, 0.0, v[mdp.next_state])).mean(axis=1)
    best = float(policy_value(mdp, value_iteration(mdp, gamma=gamma).argmax(axis=1), gamma=gamma)[mdp.start])
    rand = float(v[mdp.start])
    return (float(policy_value(mdp, np.asarray(policy), gamma=gamma)[mdp.start]) - rand) / (best - rand)


def normalised_return(mdp: Any, reward: np.ndarray, *, gamma: float = 0.95) -> float:
    """`normalised_policy_return` of the policy optimal for `reward` (by value iteration)."""
    from rewardlab.envs.gridworld import value_iteration

    return normalised_policy_return(mdp, value_iteration(mdp, reward, gamma=gamma).argmax(axis=1), gamma=gamma)


def learn_grid_reward(
    mdp: Any,
    budget: int,
    *,
    teacher: SyntheticTeacher | None = None,
    selection: str = "disagreement",
    rounds: int = 4,
    horizon: int = 8,
    pool: int = 400,
    seed: int = 0,
) -> GridPreferenceResult:
    """Learn a grid reward from `budget` synthetic preference labels, in `rounds` of queries.

    The first round is chosen uniformly; later rounds use `selection` over a fresh pool of
    random-walk segment pairs. Returns the learned reward per cell and the normalised true
    return of its optimal policy (`normalised_return`).
    """
    rng = np.random.default_rng(seed)
    teacher = teacher or SyntheticTeacher(seed=seed)
    model: PreferenceRewardModel | None = None
    f1s, f2s, ys = [], [], []
    per_round = [budget // rounds + (1 if i < budget % rounds else 0) for i in range(rounds)]
    for k in per_round:
        a_f, a_r = random_segments(mdp, pool, horizon, rng)
        b_f, b_r = random_segments(mdp, pool, horizon, rng)
        idx = select_queries(model, a_f, b_f, k, method=selection, rng=rng)
        f1s.append(a_f[idx])
        f2s.append(b_f[idx])
        ys.append(teacher.label(a_r[idx], b_r[idx]))
        model = PreferenceRewardModel(mdp.n_states, ensemble=3, seed=seed)
        model.fit(PreferenceDataset(np.concatenate(f1s), np.concatenate(f2s), np.concatenate(ys)))
    assert model is not None  # budget >= rounds >= 1 guarantees one fit
    learned = model.reward(np.eye(mdp.n_states, dtype=np.float32))
    return GridPreferenceResult(budget, learned, normalised_return(mdp, learned))


def preference_grid() -> Any:
    """The 6x6 demonstration grid: +1 for every entry into (5, 5), five traps at -1."""
    from rewardlab.envs.gridworld import GridMDP

    traps = {(2, 2): -1.0, (3, 1): -1.0, (1, 4): -1.0, (4, 3): -1.0, (3, 4): -1.0}
    # no terminal cell: equal-length segments cannot pin down a constant offset of the reward,
    # which would change the optimal policy of an episodic task but not of a continuing one
    return GridMDP.make(6, 6, rewards={(5, 5): 1.0, **traps})
