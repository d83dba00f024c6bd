"""Intrinsic rewards: count-based, hashed counts, RND, ICM-style prediction error, and a
curiosity-critic variant that discounts irreducible noise; plus a decaying weight schedule and
Gymnasium wrappers (intrinsic bonus, potential-based shaping).

Every bonus follows one small protocol and never touches an environment in its constructor
(it takes sizes, not envs):

    bonus.reward(obs, action, next_obs) -> (B,) array     # score a batch, no learning
    bonus.update(obs, action, next_obs) -> None           # learn from a batch

Sources: count bonus beta/sqrt(N) (Strehl & Littman 2008); SimHash counts (Tang et al.,
"#Exploration", NeurIPS 2017); RND (Burda et al., ICLR 2019); ICM forward-model error (Pathak
et al., ICML 2017; here without the inverse model); the curiosity-critic subtracts a learned
upper quantile of the error that cannot be reduced (the noisy-TV problem, Burda et al. 2019,
sec. 3; quantile regression, Koenker & Bassett 1978).
torch is imported lazily inside RND/ICM/curiosity-critic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

try:
    import gymnasium as gym
    import numpy as np
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab._seeding import TorchStream
from rewardlab.envs.persist import load_state, module_arrays, save_state, set_module_arrays
from rewardlab.errors import InputError, SpecError

__all__ = [
    "CountBonus",
    "CuriosityCriticBonus",
    "DecaySchedule",
    "DisagreementBonus",
    "HashedCountBonus",
    "ICMBonus",
    "IntrinsicBonus",
    "IntrinsicRewardWrapper",
    "PotentialShapingWrapper",
    "RNDBonus",
    "RunningMeanStd",
]


class IntrinsicBonus(Protocol):
    """What every intrinsic reward offers (batched: first axis is the batch)."""

    def reward(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> np.ndarray: ...

    def update(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> None: ...


@dataclass(frozen=True)
class DecaySchedule:
    """Weight of the intrinsic reward at step t: `start * decay**t`, or linear to 0 over `steps`.

    Give at most one of `decay` (0 < decay <= 1) or `steps` (> 0); with neither, decay is
    0.9999 per step. `floor` bounds the weight below.
    """

    start: float = 1.0
    decay: float | None = None
    steps: int | None = None
    floor: float = 0.0

    def __post_init__(self) -> None:
        if self.decay is not None and self.steps is not None:
            raise SpecError("DecaySchedule: give exactly one of decay= (exponential) or steps= (linear)")
        if self.decay is None and self.steps is None:
            object.__setattr__(self, "decay", 0.9999)
        if self.decay is not None and not 0 < self.decay <= 1:
            raise SpecError(f"DecaySchedule: decay must be in (0, 1], got {self.decay}")
        if self.steps is not None and self.steps <= 0:
            raise SpecError(f"DecaySchedule: steps must be positive, got {self.steps}")

    def __call__(self, t: int) -> float:
        if self.decay is not None:
            w = self.start * self.decay**t
        else:
            w = self.start * max(0.0, 1.0 - t / self.steps)  # type: ignore[operator]
        return max(w, self.floor)


class CountBonus:
    """Tabular count bonus `scale / sqrt(N(s'))` over discrete next observations.

    `next_obs` must be a batch of state indices in `[0, n_states)`, shape (B,) or (B, 1).
    Vector observations are refused (`InputError`), never flattened into wrong indices:
    featurize them to an index first, or count them with `HashedCountBonus`.
    """

    def __init__(self, n_states: int, *, scale: float = 1.0):
        self.counts = np.zeros(n_states, dtype=np.int64)
        self.scale = scale

    def _indices(self, next_obs: np.ndarray) -> np.ndarray:
        s = np.asarray(next_obs)
        if s.ndim > 2 or (s.ndim == 2 and s.shape[1] != 1):
            raise InputError(
                f"CountBonus counts state indices, one per row, but got observations of shape {s.shape}; "
                "featurize each observation to one index in [0, n_states), or use HashedCountBonus for vectors"
            )
        flat = s.reshape(-1)
        idx = flat.astype(np.int64)
        if (idx != flat).any() or (idx < 0).any() or (idx >= len(self.counts)).any():
            raise InputError(f"CountBonus needs integer state indices in [0, {len(self.counts)}), got {flat.tolist()[:8]}")
        return idx

    def reward(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> np.ndarray:
        return self.scale / np.sqrt(np.maximum(self.counts[self._indices(next_obs)], 1))  # type: ignore[no-any-return]

    def update(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> None:
        np.add.at(self.counts, self._indices(next_obs), 1)

    def save(self, path: str | Path) -> None:
        """Write the counts to an `.npz` file (`CountBonus.load` reads it)."""
        save_state(path, "CountBonus", {"scale": self.scale}, {"counts": self.counts})

    @classmethod
    def load(cls, path: str | Path) -> CountBonus:
        config, arrays = load_state(path, "CountBonus")
        bonus = cls(len(arrays["counts"]), scale=float(config["scale"]))
        bonus.counts = arrays["counts"].astype(np.int64)
        return bonus


class HashedCountBonus:
    """SimHash count bonus: `scale / sqrt(N(sign(A phi(s'))))` with a k-bit random projection."""

    def __init__(self, obs_dim: int, *, bits: int = 16, scale: float = 1.0, seed: int = 0):
        if bits < 1 or bits > 62:
            raise SpecError(f"HashedCountBonus: bits must be in 1..62, got {bits}")
        self.A = np.random.default_rng(seed).normal(size=(obs_dim, bits))
        self.powers = 1 << np.arange(bits, dtype=np.int64)
        self.counts: dict[int, int] = {}
        self.scale = scale

    def keys(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float64).reshape(len(obs), -1)
        return ((x @ self.A) > 0).astype(np.int64) @ self.powers

    def reward(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> np.ndarray:
        n = np.array([self.counts.get(int(k), 0) for k in self.keys(next_obs)])
        return self.scale / np.sqrt(np.maximum(n, 1))  # type: ignore[no-any-return]

    def update(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> None:
        for k in self.keys(next_obs):
            self.counts[int(k)] = self.counts.get(int(k), 0) + 1

    def save(self, path: str | Path) -> None:
        """Write the projection and the counts to an `.npz` file (`HashedCountBonus.load`)."""
        keys = np.fromiter(self.counts, dtype=np.int64, count=len(self.counts))
        values = np.fromiter(self.counts.values(), dtype=np.int64, count=len(self.counts))
        save_state(path, "HashedCountBonus", {"scale": self.scale}, {"A": self.A, "keys": keys, "values": values})

    @classmethod
    def load(cls, path: str | Path) -> HashedCountBonus:
        config, arrays = load_state(path, "HashedCountBonus")
        A = arrays["A"]
        bonus = cls(A.shape[0], bits=A.shape[1], scale=float(config["scale"]))
        bonus.A = A
        bonus.counts = dict(zip(arrays["keys"].tolist(), arrays["values"].tolist(), strict=True))
        return bonus


def _mlp(n_in: int, n_out: int, hidden: int) -> Any:
    from torch import nn

    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, n_out))


def _config(args: dict[str, Any]) -> dict[str, Any]:
    """A constructor's arguments (its `locals()` on entry), for `save`."""
    return {k: v for k, v in args.items() if k not in ("self", "__class__")}


class _TorchBonus:
    """Shared plumbing: seeding, tensors, optimiser steps, save/load of every module.

    Subclasses set `self.config` to their constructor's arguments; `load` rebuilds the bonus
    from them and loads every torch module (optimiser state and replay buffers start afresh).
    """

    config: dict[str, Any]

    def __init__(self, seed: int, lr: float, epochs: int):
        import torch

        self.torch = torch
        self._stream = TorchStream(seed)  # seeded initial weights without resetting the caller's generator
        self.lr, self.epochs = lr, epochs

    def _net(self, n_in: int, n_out: int, hidden: int) -> Any:
        """An MLP initialised from this bonus's own seeded stream."""
        with self._stream.active():
            return _mlp(n_in, n_out, hidden)

    def _modules(self) -> dict[str, Any]:
        nn = self.torch.nn
        found: dict[str, Any] = {}
        for name, value in vars(self).items():
            if isinstance(value, nn.Module):
                found[name] = value
            elif isinstance(value, list) and value and all(isinstance(v, nn.Module) for v in value):
                found.update({f"{name}{i}": v for i, v in enumerate(value)})
        return found

    def _extra_arrays(self) -> dict[str, np.ndarray]:
        return {}

    def _set_extra_arrays(self, arrays: dict[str, np.ndarray]) -> None:
        return None

    def save(self, path: str | Path) -> None:
        """Write the configuration and every module's weights to an `.npz` file."""
        arrays = {k: v for name, m in self._modules().items() for k, v in module_arrays(name, m).items()}
        save_state(path, type(self).__name__, self.config, {**arrays, **self._extra_arrays()})

    @classmethod
    def load(cls, path: str | Path) -> Any:
        """The bonus saved at `path` (same class), ready to score and to keep learning."""
        config, arrays = load_state(path, cls.__name__)
        bonus = cls(**config)
        for name, m in bonus._modules().items():
            set_module_arrays(name, m, arrays, source=str(path))
        bonus._set_extra_arrays(arrays)
        return bonus

    def t(self, x: Any) -> Any:
        return self.torch.as_tensor(np.asarray(x, dtype=np.float32))

    def _train(self, params: Any, loss_fn: Callable[[], Any]) -> None:
        opt = getattr(self, "_opt", None)
        if opt is None:
            opt = self._opt = self.torch.optim.Adam(params, lr=self.lr)
        for _ in range(self.epochs):
            opt.zero_grad()
            loss_fn().backward()
            opt.step()


class RunningMeanStd:
    """Running mean and variance over batches (Chan et al.'s parallel update), shape `shape`."""

    def __init__(self, shape: tuple[int, ...] = ()):
        self.mean, self.var, self.count = np.zeros(shape), np.ones(shape), 0.0

    def update(self, x: np.ndarray) -> None:
        x = np.asarray(x, dtype=np.float64).reshape(-1, *self.mean.shape)
        n, mean, var = len(x), x.mean(axis=0), x.var(axis=0)
        total = self.count + n
        delta = mean - self.mean
        m2 = self.var * self.count + var * n + delta**2 * self.count * n / total
        self.mean, self.var, self.count = self.mean + delta * n / total, m2 / total, total

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}.mean": self.mean, f"{prefix}.var": self.var, f"{prefix}.count": np.array(self.count)}

    def set_arrays(self, prefix: str, arrays: dict[str, np.ndarray]) -> None:
        self.mean, self.var = arrays[f"{prefix}.mean"], arrays[f"{prefix}.var"]
        self.count = float(arrays[f"{prefix}.count"])


class RNDBonus(_TorchBonus):
    """Random network distillation: error of a trained predictor against a fixed random net.

    With `normalize` (the default), as in Burda et al. (ICLR 2019, sec. 2.4): observations are
    whitened by running statistics and clipped to [-5, 5] before both networks, and the bonus
    is divided by a running standard deviation of the discounted intrinsic return (`gamma`,
    non-episodic, one return per batch position), so its scale is stable over training.
    Statistics are updated by `update`, never by `reward`.
    """

    def __init__(self, obs_dim: int, *, embed: int = 16, hidden: int = 64, lr: float = 1e-3, epochs: int = 4,
                 normalize: bool = True, gamma: float = 0.99, seed: int = 0):
        config = _config(locals())
        super().__init__(seed, lr, epochs)
        self.config = config
        self.target, self.predictor = self._net(obs_dim, embed, hidden), self._net(obs_dim, embed, hidden)
        for p in self.target.parameters():
            p.requires_grad_(False)
        self.normalize, self.gamma = normalize, gamma
        self.obs_rms, self.ret_rms = RunningMeanStd((obs_dim,)), RunningMeanStd()
        self._ret: np.ndarray | None = None

    def _inputs(self, next_obs: np.ndarray) -> Any:
        x = np.asarray(next_obs, dtype=np.float32).reshape(len(next_obs), -1)
        if self.normalize and self.obs_rms.count > 0:
            x = np.clip((x - self.obs_rms.mean) / np.sqrt(self.obs_rms.var + 1e-8), -5.0, 5.0)
        return self.t(x)

    def _err(self, next_obs: np.ndarray) -> Any:
        x = self._inputs(next_obs)
        return ((self.predictor(x) - self.target(x)) ** 2).mean(-1)

    def reward(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> np.ndarray:
        with self.torch.no_grad():
            err = self._err(next_obs).numpy()
        if self.normalize and self.ret_rms.count > 1 and float(self.ret_rms.var) > 0:
            err = err / np.sqrt(float(self.ret_rms.var))
        return err  # type: ignore[no-any-return]

    def update(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> None:
        if self.normalize:
            self.obs_rms.update(np.asarray(next_obs, dtype=np.float64).reshape(len(next_obs), -1))
            with self.torch.no_grad():
                err = self._err(next_obs).numpy().astype(np.float64)
            same = self._ret is not None and self._ret.shape == err.shape
            self._ret = self._ret * self.gamma + err if same else err  # type: ignore[operator]
            self.ret_rms.update(self._ret)
        self._train(self.predictor.parameters(), lambda: self._err(next_obs).mean())

    def _extra_arrays(self) -> dict[str, np.ndarray]:
        return {**self.obs_rms.arrays("obs_rms"), **self.ret_rms.arrays("ret_rms")}

    def _set_extra_arrays(self, arrays: dict[str, np.ndarray]) -> None:
        self.obs_rms.set_arrays("obs_rms", arrays)
        self.ret_rms.set_arrays("ret_rms", arrays)


class ICMBonus(_TorchBonus):
    """ICM-style curiosity: squared error of a forward model predicting s' from (s, a).

    Distracted by noise by design: an unpredictable s' keeps its error high forever.
    """

    def __init__(
        self, obs_dim: int, n_actions: int, *, hidden: int = 64, lr: float = 3e-3, epochs: int = 4, replay: int = 64,
        capacity: int = 20_000, seed: int = 0,
    ):
        config = _config(locals())
        super().__init__(seed, lr, epochs)
        self.config = config
        self.n_actions, self.obs_dim = n_actions, obs_dim
        # each update also replays `replay` older transitions from a buffer of `capacity`
        self.replay, self.capacity, self._rng = replay, capacity, np.random.default_rng(seed)
        self.forward_model = self._net(obs_dim + n_actions, obs_dim, hidden)

    def _inputs(self, obs: np.ndarray, action: np.ndarray) -> Any:
        a = np.eye(self.n_actions, dtype=np.float32)[np.asarray(action, dtype=np.int64).reshape(-1)]
        return self.t(np.concatenate([np.asarray(obs, dtype=np.float32).reshape(len(a), -1), a], axis=1))

    def _err(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> Any:
        pred = self.forward_model(self._inputs(obs, action))
        return ((pred - self.t(next_obs).reshape(pred.shape)) ** 2).sum(-1)

    def reward(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> np.ndarray:
        with self.torch.no_grad():
            return self._err(obs, action, next_obs).numpy()  # type: ignore[no-any-return]

    def _replay(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> tuple[np.ndarray, ...]:
        """The new batch plus up to `replay` older transitions drawn from a bounded buffer."""
        batch = (np.asarray(obs, dtype=np.float32).reshape(len(obs), -1), np.asarray(action).reshape(-1),
                 np.asarray(next_obs, dtype=np.float32).reshape(len(obs), -1))
        old = getattr(self, "_buffer", None)
        self._buffer = batch if old is None else tuple(np.concatenate([o, b])[-self.capacity :] for o, b in zip(old, batch, strict=True))
        if old is None or self.replay == 0:
            return batch
        idx = self._rng.integers(0, len(old[0]), self.replay)
        return tuple(np.concatenate([b, o[idx]]) for b, o in zip(batch, old, strict=True))

    def update(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> None:
        o, a, o2 = self._replay(obs, action, next_obs)
        self._train(self.forward_model.parameters(), lambda: self._err(o, a, o2).mean())


class CuriosityCriticBonus(ICMBonus):
    """Prediction error minus a critic's upper quantile of the error that remains.

    A second network (the critic) learns, per (s, a), the `quantile`-quantile of the forward
    model's error on fresh transitions, with the pinball loss (Koenker & Bassett 1978); the
    bonus is `error - critic(s, a)`: only error *beyond* the band the noise explains is
    surprising. Where s' is pure noise (a noisy TV) the error is a wide, never-shrinking
    distribution, so its mean sits well below its upper quantile and the bonus is negative on
    average (for 4 N(0, 1) channels: squared error ~ chi-square(4), mean 4, 0.9-quantile 7.8):
    irreducible noise is discounted with a margin that grows with the noise. Where s' is
    learnable the error distribution is narrow, the quantile is close to the error and the
    bonus goes to ~0 as the model learns; a novel (s, a) has an error the critic has not
    seen yet, above the band, and earns a positive bonus.

    Why not the mean (`quantile=None`, the first version): then the bonus has mean 0 on the TV
    but a per-sample spread of ~3, and a greedy tabular agent chases that spread (Q-learning's
    maximisation bias, van Hasselt 2010) while the bonus elsewhere is slightly negative (the
    critic lags a forward model that keeps improving): agents still spent 40% of their steps
    on the TV. Clipping `error - mean` at 0 would not help: its mean on noise is positive.
    """

    def __init__(
        self, obs_dim: int, n_actions: int, *, hidden: int = 64, lr: float = 3e-3, critic_lr: float = 1e-2, epochs: int = 4,
        replay: int = 64, critic_window: int = 2000, quantile: float | None = 0.9, seed: int = 0,
    ):
        config = _config(locals())
        super().__init__(obs_dim, n_actions, hidden=hidden, lr=lr, epochs=epochs, replay=replay, seed=seed)
        self.config = config
        if quantile is not None and not 0.0 < quantile < 1.0:
            raise SpecError(f"CuriosityCriticBonus: quantile must be in (0, 1) or None (mean), got {quantile}")
        self.quantile = quantile
        self.critic = self._net(obs_dim + n_actions, 1, hidden)
        # the critic must track the error level faster than the policy chases it
        self._critic_opt = self.torch.optim.Adam(self.critic.parameters(), lr=critic_lr)
        # recent (input, fresh error) pairs the critic regresses on; old errors go stale as the
        # forward model learns, so only the last `critic_window` are kept
        self.critic_window = critic_window
        self._critic_x: Any = None
        self._critic_y: Any = None

    def reward(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> np.ndarray:
        with self.torch.no_grad():
            err = self._err(obs, action, next_obs)
            floor = self.critic(self._inputs(obs, action)).squeeze(-1)
            # not clamped at 0: max(0, err - floor) has a positive mean on pure noise
            return (err - floor).numpy()  # type: ignore[no-any-return]

    def _critic_loss(self, pred: Any, target: Any) -> Any:
        d = target - pred
        if self.quantile is None:
            return (d**2).mean()
        return self.torch.maximum(self.quantile * d, (self.quantile - 1.0) * d).mean()  # pinball loss

    def update(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> None:
        # the critic's targets are errors on transitions the forward model has NOT trained on
        # yet: once replayed, noise samples get memorised and their error would understate
        # what a fresh visit to the noisy TV yields
        x_new = self._inputs(obs, action)
        with self.torch.no_grad():
            fresh = self._err(obs, action, next_obs)
        o, a, o2 = self._replay(obs, action, next_obs)
        self._train(self.forward_model.parameters(), lambda: self._err(o, a, o2).mean())
        xs = x_new if self._critic_x is None else self.torch.cat([self._critic_x, x_new])[-self.critic_window :]
        ys = fresh if self._critic_y is None else self.torch.cat([self._critic_y, fresh])[-self.critic_window :]
        self._critic_x, self._critic_y = xs, ys
        idx = self.torch.as_tensor(self._rng.integers(0, len(xs), len(x_new) + self.replay))
        x, target = xs[idx], ys[idx]
        for _ in range(2 * self.epochs):
            self._critic_opt.zero_grad()
            self._critic_loss(self.critic(x).squeeze(-1), target).backward()
            self._critic_opt.step()


class DisagreementBonus(ICMBonus):
    """Variance across an ensemble of forward models (Pathak, Gandhi, Gupta, ICML 2019).

    Every member sees the same data from its own initialisation and minibatch draw; where s'
    is pure noise they all converge to its mean and agree, so irreducible noise earns nothing,
    while novel (s, a) keep their members apart. Unlike `CuriosityCriticBonus` the bonus does
    not depend on the sampled s', so it carries no per-sample noise.
    """

    def __init__(
        self, obs_dim: int, n_actions: int, *, members: int = 3, hidden: int = 64, lr: float = 3e-3, epochs: int = 4,
        replay: int = 64, seed: int = 0,
    ):
        config = _config(locals())
        super().__init__(obs_dim, n_actions, hidden=hidden, lr=lr, epochs=epochs, replay=replay, seed=seed)
        self.config = config
        self.models = [self.forward_model] + [self._net(obs_dim + n_actions, obs_dim, hidden) for _ in range(members - 1)]
        self._opts = [self.torch.optim.Adam(m.parameters(), lr=lr) for m in self.models]

    def reward(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> np.ndarray:
        with self.torch.no_grad():
            x = self._inputs(obs, action)
            preds = self.torch.stack([m(x) for m in self.models])  # (K, B, obs_dim)
            return preds.var(dim=0).sum(-1).numpy()  # type: ignore[no-any-return]

    def update(self, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray) -> None:
        self._replay(obs, action, next_obs)
        buf = self._buffer
        for m, opt in zip(self.models, self._opts, strict=True):
            idx = self._rng.integers(0, len(buf[0]), len(obs) + self.replay)  # each member its own draw
            x, y = self._inputs(buf[0][idx], buf[1][idx]), self.t(buf[2][idx])
            for _ in range(self.epochs):
                opt.zero_grad()
                ((m(x) - y) ** 2).sum(-1).mean().backward()
                opt.step()


class IntrinsicRewardWrapper(gym.Wrapper):
    """Adds `schedule(t) * bonus.reward(...)` to the env reward and trains the bonus online.

    `featurize(obs) -> 1-D array` maps observations to what the bonus sees (default: as is).
    info gets `reward/env`, `reward/intrinsic` (unweighted) and `intrinsic/weight`.
    """

    def __init__(self, env: gym.Env, bonus: IntrinsicBonus, *, schedule: DecaySchedule | None = None,
                 featurize: Callable[[Any], np.ndarray] | None = None, learn: bool = True):
        super().__init__(env)
        self.bonus, self.schedule, self.learn = bonus, schedule or DecaySchedule(), learn
        self.featurize = featurize or (lambda o: np.asarray(o, dtype=np.float32).reshape(-1))
        self.t, self._obs = 0, None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._obs, info = self.env.reset(**kwargs)
        return self._obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, r, term, trunc, info = self.env.step(action)
        o, o2, a = self.featurize(self._obs)[None], self.featurize(obs)[None], np.asarray([action])
        bonus = float(self.bonus.reward(o, a, o2)[0])
        if self.learn:
            self.bonus.update(o, a, o2)
        w = self.schedule(self.t)
        self.t += 1
        info["reward/env"], info["reward/intrinsic"], info["intrinsic/weight"] = r, bonus, w
        self._obs = obs
        return obs, float(r) + w * bonus, term, trunc, info

class PotentialShapingWrapper(gym.Wrapper):
    """Potential-based shaping r + gamma * Phi(s') - Phi(s), Phi(terminal) = 0 (Ng et al. 1999).

    Leaves optimal policies unchanged; `info["reward/env"]` keeps the unshaped reward.
    """

    def __init__(self, env: gym.Env, potential: Callable[[Any], float], *, gamma: float = 0.99):
        super().__init__(env)
        if not 0 <= gamma <= 1:
            raise SpecError(f"PotentialShapingWrapper: gamma must be in [0, 1], got {gamma}")
        self.potential, self.gamma, self._phi = potential, gamma, 0.0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._phi = float(self.potential(obs))
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, r, term, trunc, info = self.env.step(action)
        phi2 = 0.0 if term else float(self.potential(obs))
        if not math.isfinite(phi2):
            raise SpecError(f"potential returned {phi2} for observation {obs!r}; it must be finite")
        shaped = float(r) + self.gamma * phi2 - self._phi
        info["reward/env"], info["reward/shaping"] = r, shaped - float(r)
        self._phi = phi2
        return obs, shaped, term, trunc, info
