"""`CounterfactualReplayBuffer` inside real Stable-Baselines3 VecEnvs and algorithms."""

from __future__ import annotations

import numpy as np
import pytest

sb3 = pytest.importorskip("stable_baselines3")

from stable_baselines3.common.env_util import make_vec_env  # noqa: E402

from rewardlab.envs.officeworld import TASK_ORDER, OfficeWorld, office_labels, office_task  # noqa: E402
from rewardlab.envs.rm.sb3 import CounterfactualDictReplayBuffer, CounterfactualReplayBuffer  # noqa: E402
from rewardlab.envs.rm.wrapper import RewardMachineWrapper  # noqa: E402
from rewardlab.errors import InputError, SpecError  # noqa: E402


def _make(obs_mode: str = "onehot", tasks: tuple[str, ...] = ("coffee",), counterfactuals: bool = True):  # type: ignore[no-untyped-def]
    def make() -> RewardMachineWrapper:
        return RewardMachineWrapper(OfficeWorld(max_episode_steps=30), [office_task(t) for t in tasks], office_labels,
                                    obs_mode=obs_mode, counterfactuals=counterfactuals)  # type: ignore[arg-type]

    return make


def _dqn(venv, buffer_class, **kw):  # type: ignore[no-untyped-def]
    return sb3.DQN("MlpPolicy" if buffer_class is CounterfactualReplayBuffer else "MultiInputPolicy", venv,
                   replay_buffer_class=buffer_class, learning_starts=50, buffer_size=5000, seed=0, device="cpu",
                   policy_kwargs={"net_arch": [16]}, **kw)


def test_every_env_of_a_vec_env_stores_one_experience_per_live_rm_state() -> None:
    venv = make_vec_env(_make(tasks=TASK_ORDER), n_envs=3, seed=0)
    model = _dqn(venv, CounterfactualReplayBuffer)
    model.learn(total_timesteps=300)
    buf = model.replay_buffer
    live = sum(1 for t in TASK_ORDER for s in office_task(t).states if not office_task(t).is_terminal(s))  # 13
    assert buf.size() == live * (model.num_timesteps // 3)  # one row per live (task, state) per VecEnv step
    k = 12 + 9  # one-hot of x and y, then the RM state over every task's states
    stored_states = buf.observations[: buf.size(), :, k:].argmax(-1)  # (rows, envs)
    # every env stored the same (task, state) sequence per step, whatever task it was running
    live_states = _make(tasks=TASK_ORDER)().table.live.tolist()
    assert stored_states[:live, 0].tolist() == live_states and (stored_states[:live] == stored_states[:live, :1]).all()
    # the next observation of each experience is what the machine does on the labels: rewards
    # only on accepting edges, and an accepting/rejecting experience is done
    assert set(np.unique(buf.rewards[: buf.size()])) <= {0.0, 1.0}
    assert not buf.timeouts.any()


def test_a_counterfactual_experience_equals_stepping_the_machine_from_that_state() -> None:
    venv = make_vec_env(_make(tasks=("coffee_mail",)), n_envs=2, seed=1)
    model = _dqn(venv, CounterfactualReplayBuffer)
    model.learn(total_timesteps=400)
    buf, rm, k = model.replay_buffer, office_task("coffee_mail"), 21
    from rewardlab.envs.officeworld import OFFICE_ALPHABET, office_transitions

    nxt, label = office_transitions()
    for row in range(0, buf.size(), 7):
        for env in range(2):
            o, o2 = buf.observations[row, env], buf.next_observations[row, env]
            x, y, u = o[:12].argmax(), o[12:21].argmax(), o[k:].argmax()
            x2, y2, v = o2[:12].argmax(), o2[12:21].argmax(), o2[k:].argmax()
            a = int(buf.actions[row, env, 0])
            assert y2 * 12 + x2 == nxt[y * 12 + x, a]  # the env transition itself
            step = rm.step_index(int(u), OFFICE_ALPHABET[label[nxt[y * 12 + x, a]]])
            assert (v, buf.rewards[row, env], bool(buf.dones[row, env])) == (step[0], step[1], step[2] or step[3])


def test_the_dict_buffer_stores_dict_observations() -> None:
    venv = make_vec_env(_make(obs_mode="dict"), n_envs=2, seed=0)
    model = _dqn(venv, CounterfactualDictReplayBuffer)
    model.learn(total_timesteps=100)
    buf = model.replay_buffer
    assert buf.size() == 2 * (model.num_timesteps // 2)
    assert set(np.unique(buf.observations["rm"][: buf.size()])) == {0, 1}  # both live coffee states


def test_an_env_without_counterfactual_info_is_a_clear_error() -> None:
    venv = make_vec_env(_make(counterfactuals=False), n_envs=2, seed=0)
    model = _dqn(venv, CounterfactualReplayBuffer)
    with pytest.raises(InputError, match="counterfactuals=True"):
        model.learn(total_timesteps=10)


def test_memory_optimised_buffers_are_refused() -> None:
    venv = make_vec_env(_make(), n_envs=1, seed=0)
    with pytest.raises(SpecError, match="optimize_memory_usage=False"):
        _dqn(venv, CounterfactualReplayBuffer, optimize_memory_usage=True,
             replay_buffer_kwargs={"handle_timeout_termination": False})
