"""Every wrapper mode against a straightforward reference.

Each obs mode x reward mode x labelling kind x shaping x one/two tasks is stepped beside
`reference_step`, which evaluates the machine's guards directly (`RewardMachine.step_index`) with
none of the wrapper's tables or memos, and encodes observations from their definition.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

import numpy as np
import pytest

from rewardlab.envs.officeworld import OfficeWorld, office_labels, office_task
from rewardlab.envs.rm.shaping import rm_potentials
from rewardlab.envs.rm.wrapper import RewardMachineWrapper


class EndingOffice(OfficeWorld):
    """The office world, but stepping into the left column ends the episode with env reward 1."""

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, _, _, truncated, info = super().step(action)
        left = bool(obs[0] == 0)
        return obs, 1.0 if left else 0.0, left, truncated, info


def plain_labels(obs: Any, action: Any, next_obs: Any, info: dict[str, Any]) -> set[str]:
    """A labelling function that is not `InfoLabels` and returns a plain set (converted per step)."""
    return set(office_labels.fallback(obs, action, next_obs, info))  # type: ignore[misc]


def reference_obs(obs: np.ndarray, g: int, n: int, mode: str) -> Any:
    if mode == "dict":
        return {"obs": obs, "rm": g}
    if mode == "flat":
        return np.concatenate((obs.astype(np.float32), np.eye(n, dtype=np.float32)[g]))
    if mode == "onehot":  # one-hot of x (12 values), of y (9 values), of the RM state
        return np.concatenate((np.eye(12, dtype=np.float32)[obs[0]], np.eye(9, dtype=np.float32)[obs[1]],
                               np.eye(n, dtype=np.float32)[g]))
    if mode == "joint":  # one unit per cell (index x * 9 + y: C order over [x, y]), then the RM state
        return np.concatenate((np.eye(108, dtype=np.float32)[obs[0] * 9 + obs[1]], np.eye(n, dtype=np.float32)[g]))
    return obs


def reference_step(ctx: dict[str, Any], out: tuple[Any, ...], action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
    """One wrapped step computed from the machine's definition; updates `ctx` (task, u, obs)."""
    obs, env_r, terminated, truncated, info = out
    rms, task, u = ctx["rms"], ctx["task"], ctx["u"]
    rm = rms[task]
    labels = frozenset(ctx["label"](ctx["obs"], action, obs, info))
    v, rm_r, acc, rej, _ = rm.step_index(u, labels)
    ends = bool(acc or rej or terminated)
    reward = rm_r
    if ctx["gamma"] is not None:  # Phi(terminal) = 0 (the machine or the env ends the episode)
        phi = rm_potentials(rm, gamma=ctx["gamma"])
        reward = rm_r + ctx["gamma"] * (0.0 if ends else float(phi[v])) - float(phi[u])
    if ctx["sum"]:
        reward += env_r
    want = dict(info, **{"reward/env": env_r, "reward/rm": rm_r, "rm/state": rm.states[v], "rm/labels": labels})
    if len(rms) > 1:
        want["rm/task"] = task
    if acc or rej:
        want["rm/accepted"], want["rm/rejected"] = acc, rej
    ctx["last"] = (ctx["obs"], action, obs, labels, terminated)
    ctx["u"], ctx["obs"] = v, obs
    return reference_obs(obs, ctx["offsets"][task] + v, ctx["offsets"][-1], ctx["mode"]), reward, ends, truncated and not ends, want


def assert_same_obs(got: Any, want: Any) -> None:
    if isinstance(want, dict):
        assert got.keys() == want.keys() and got["rm"] == want["rm"]
        np.testing.assert_array_equal(got["obs"], want["obs"])
    else:
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)


MODES = list(itertools.product(("dict", "flat", "onehot", "joint", "none"), ("rm", "sum"), ("info", "plain"), (None, 0.9), (1, 2)))


@pytest.mark.parametrize(("obs_mode", "reward_mode", "labelling", "gamma", "n_tasks"), MODES)
def test_every_mode_matches_the_reference(obs_mode: str, reward_mode: str, labelling: str, gamma: float | None, n_tasks: int) -> None:
    rms = [office_task(t) for t in ("coffee_mail", "patrol")[:n_tasks]]
    label = office_labels if labelling == "info" else plain_labels
    env = RewardMachineWrapper(
        EndingOffice(max_episode_steps=40), rms, label, obs_mode=obs_mode, reward_mode=reward_mode, shaping_gamma=gamma  # type: ignore[arg-type]
    )
    twin = EndingOffice(max_episode_steps=40)  # the same env, stepped by the reference
    offsets = [0, *np.cumsum([m.n_states for m in rms]).tolist()]
    ctx: dict[str, Any] = {"rms": rms, "label": label, "gamma": gamma, "sum": reward_mode == "sum", "mode": obs_mode}
    ctx["offsets"], ctx["task"] = offsets, -1
    actions = np.random.default_rng(7).integers(0, 4, 1500).tolist()
    episodes = ends_by_machine = 0
    obs, _ = env.reset(seed=0)
    done = True  # the reference starts its first episode too
    for i, a in enumerate(actions):
        if done:
            if i:
                obs, _ = env.reset()
            o, _ = twin.reset(seed=0)
            task = ctx["task"] = (ctx["task"] + 1) % n_tasks
            ctx["u"], ctx["obs"] = rms[task].index[rms[task].initial], o
            assert env.task == ctx["task"] and env.u == ctx["u"]
            assert_same_obs(obs, reference_obs(o, offsets[ctx["task"]] + ctx["u"], offsets[-1], obs_mode))
            episodes += 1
        got = env.step(a)
        want = reference_step(ctx, twin.step(a), a)
        assert_same_obs(got[0], want[0])
        assert got[1] == pytest.approx(want[1]) and got[2:4] == want[2:4] and got[4] == want[4], (i, got[1:], want[1:])
        last = env.last_transition
        assert last is not None and (last[1], last[3], last[4]) == (a, ctx["last"][3], ctx["last"][4])
        np.testing.assert_array_equal(last[0], ctx["last"][0])
        np.testing.assert_array_equal(last[2], ctx["last"][2])
        done = got[2] or got[3]
        ends_by_machine += bool(got[4].get("rm/accepted") or got[4].get("rm/rejected"))
    assert episodes > 20 and ends_by_machine > 0  # the run went through resets, env ends and machine ends


@pytest.mark.parametrize("obs_mode", ["dict", "flat", "onehot", "joint", "none"])
def test_a_deep_copy_keeps_the_state_and_steps_alike(obs_mode: str) -> None:
    env = RewardMachineWrapper(OfficeWorld(), office_task("coffee"), office_labels, obs_mode=obs_mode)  # type: ignore[arg-type]
    env.reset(seed=0)
    env.step(1)
    twin = copy.deepcopy(env)
    assert type(twin) is RewardMachineWrapper and twin.u == env.u
    assert_same_obs(twin.step(2)[0], env.step(2)[0])


def test_a_user_subclass_keeps_its_own_step() -> None:
    class Counting(RewardMachineWrapper):
        steps = 0

        def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
            self.steps += 1
            return super().step(action)

    env = Counting(OfficeWorld(), office_task("coffee"), office_labels, obs_mode="onehot")
    env.reset(seed=0)
    env.step(0)
    assert type(env) is Counting and env.steps == 1
