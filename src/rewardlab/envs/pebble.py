"""Online preference learning for Stable-Baselines3 off-policy agents, PEBBLE-style.

Lee, Smith & Abbeel, "PEBBLE: Feedback-Efficient Interactive Reinforcement Learning via
Relabeling Experience and Unsupervised Pre-training" (ICML 2021), Algorithm 1: while the agent
trains on the learned reward, every K steps draw candidate segment pairs from the agent's own
replay buffer, ask the teacher about the most uncertain ones (ensemble disagreement), refit the
reward model on every answer so far, and **relabel every reward stored in the replay buffer**
with the new model, so old experience is never trained on with a stale reward. (The paper's
unsupervised pre-training phase is not part of this loop: pass an exploration bonus's agent, or
none.)

    venv = LearnedRewardVecWrapper(make_vec_env(...), model, featurize)    # the agent sees r_hat
    agent = DQN("MlpPolicy", venv)
    agent.learn(50_000, callback=PebbleCallback(model, teacher, featurize, every=2_000))

The teacher answers from the true rewards the env reports in `info["reward/env"]`, which the
learned-reward wrappers keep; the callback records them for every buffer row it sees added.
"""

from __future__ import annotations

from collections.abc import Callable

try:
    import numpy as np
    from stable_baselines3.common.buffers import ReplayBuffer
    from stable_baselines3.common.callbacks import BaseCallback
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.envs.preferences import (
    PreferenceDataset,
    PreferenceRewardModel,
    SyntheticTeacher,
    select_queries,
)
from rewardlab.errors import InputError, SpecError

__all__ = ["PebbleCallback", "relabel_replay_buffer"]

#: `(obs, actions, next_obs)` batches as the buffer stores them -> (B, F) per-step features
Featurize = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def relabel_replay_buffer(buffer: ReplayBuffer, model: PreferenceRewardModel, featurize: Featurize) -> int:
    """Overwrite every stored reward with `model`'s reward of its transition; returns the rows.

    PEBBLE's relabelling step (Lee et al. 2021, Algorithm 1, line 15).
    """
    rows = buffer.size()
    if rows == 0:
        return 0
    n_envs = buffer.n_envs
    obs = buffer.observations[:rows].reshape(rows * n_envs, *buffer.obs_shape)
    nxt = buffer.next_observations[:rows].reshape(rows * n_envs, *buffer.obs_shape)
    act = buffer.actions[:rows].reshape(rows * n_envs, -1)
    buffer.rewards[:rows] = np.asarray(model.reward(featurize(obs, act, nxt))).reshape(rows, n_envs)
    return rows


class PebbleCallback(BaseCallback):
    """Queries a teacher on segments of the agent's replay buffer, refits, relabels.

    Args:
        model: the learned reward the agent trains on (through a learned-reward wrapper).
        teacher: answers comparisons from true rewards (`SyntheticTeacher`, B-Pref parameters).
        featurize: buffer batches `(obs, actions, next_obs)` -> (B, F) features of the model.
        every: env steps (over every env) between feedback rounds.
        queries: comparisons asked per round.
        horizon: steps per segment.
        pool: candidate pairs drawn per round, from which `queries` are selected.
        selection: `"disagreement"` (ensemble std of P, as in PEBBLE) or `"uniform"`.
        true_reward_key: the info key holding the true reward.
        seed: seeds the segment draws.

    Attributes:
        labels: answered comparisons so far.
        rounds: feedback rounds run.
    """

    def __init__(self, model: PreferenceRewardModel, teacher: SyntheticTeacher, featurize: Featurize, *,
                 every: int = 2000, queries: int = 16, horizon: int = 10, pool: int = 128,
                 selection: str = "disagreement", true_reward_key: str = "reward/env", seed: int = 0):
        super().__init__()
        if every < 1 or queries < 1 or horizon < 1 or pool < queries:
            raise SpecError(f"PebbleCallback needs every, queries, horizon >= 1 and pool >= queries; got "
                            f"{every}, {queries}, {horizon}, {pool}")
        self.reward_model, self.teacher, self.featurize = model, teacher, featurize
        self.every, self.queries, self.horizon, self.pool = every, queries, horizon, pool
        self.selection, self.key = selection, true_reward_key
        self.rng = np.random.default_rng(seed)
        self.labels, self.rounds = 0, 0
        self._data: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._true: np.ndarray | None = None
        self._next_round = every

    @property
    def _buffer(self) -> ReplayBuffer:
        buffer = getattr(self.model, "replay_buffer", None)
        if not isinstance(buffer, ReplayBuffer) or isinstance(buffer.observations, dict):
            raise InputError("PebbleCallback needs an off-policy agent (DQN, SAC, TD3) with a ReplayBuffer of array observations")
        return buffer

    def _on_step(self) -> bool:
        buffer = self._buffer
        if self._true is None:
            self._true = np.zeros((buffer.buffer_size, buffer.n_envs))
        infos = self.locals["infos"]
        if any(self.key not in info for info in infos):
            raise InputError(f"the step infos have no {self.key!r}; wrap the VecEnv in LearnedRewardVecWrapper "
                             "(or report the true reward under that key)")
        # SB3 calls back before it stores the step: this transition lands in row `buffer.pos`
        self._true[buffer.pos] = [float(info[self.key]) for info in infos]
        if self.num_timesteps >= self._next_round:
            self._next_round += self.every
            self.feedback_round()
        return True

    def _segment_starts(self, rows: int) -> np.ndarray:
        """(row, env) starts of segments that stay inside one episode (no `done` before their end)."""
        dones = self._buffer.dones[:rows].astype(np.int64)  # (rows, n_envs)
        ends = np.concatenate([np.zeros((1, dones.shape[1]), np.int64), np.cumsum(dones, axis=0)])
        starts = np.arange(max(rows - self.horizon + 1, 0))
        inside = ends[starts + self.horizon - 1] - ends[starts] == 0  # dones in rows start .. start+H-2
        return np.argwhere(inside)

    def _segments(self, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        buffer, H = self._buffer, self.horizon
        rows = starts[:, :1] + np.arange(H)[None, :]  # (N, H)
        envs = np.repeat(starts[:, 1:], H, axis=1)
        obs, nxt = buffer.observations[rows, envs], buffer.next_observations[rows, envs]
        act = buffer.actions[rows, envs]
        flat = self.featurize(obs.reshape(-1, *buffer.obs_shape), act.reshape(len(obs) * H, -1),
                              nxt.reshape(-1, *buffer.obs_shape))
        return np.asarray(flat, dtype=np.float32).reshape(len(starts), H, -1), self._true[rows, envs]  # type: ignore[index]

    def feedback_round(self) -> None:
        """Ask about `queries` segment pairs, refit the reward model, relabel the buffer."""
        buffer = self._buffer
        rows = buffer.size() if not buffer.full else 0  # a wrapped buffer's rows are out of order
        if buffer.full:
            raise InputError("PebbleCallback needs a replay buffer larger than the training run (no wrap-around)")
        starts = self._segment_starts(rows)
        if len(starts) < 2:
            return
        pick = self.rng.integers(0, len(starts), (self.pool, 2))
        f1, r1 = self._segments(starts[pick[:, 0]])
        f2, r2 = self._segments(starts[pick[:, 1]])
        model = self.reward_model if self._data else None
        ask = select_queries(model, f1, f2, self.queries, method=self.selection, rng=self.rng)
        self._data.append((f1[ask], f2[ask], self.teacher.label(r1[ask], r2[ask])))
        self.reward_model.fit(PreferenceDataset(*(np.concatenate(part) for part in zip(*self._data, strict=True))))
        self.labels += len(ask)
        self.rounds += 1
        relabel_replay_buffer(buffer, self.reward_model, self.featurize)
