"""Classic multi-objective RL: the vector-reward wrapper under MO-Gymnasium's own wrappers, deep
sea treasure's published front recovered by a tabular weight sweep, the heterogeneous-discount
counterexample and its non-Markovian fix, and MD3QN's joint return on correlated sources."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from rewardlab.envs.joint_returns import JointReturns, mmd_squared
from rewardlab.envs.multiobj import (
    DiscountAggregator,
    HeterogeneousDiscounts,
    VectorReward,
    q_learning_front,
    tabular_q,
)
from rewardlab.errors import ConfigError, InputError

mo_gym = pytest.importorskip("mo_gymnasium")


def _dst() -> gym.Env[Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mo-gymnasium's own deprecation notes
        return VectorReward(mo_gym.make("deep-sea-treasure-v0"), names=("treasure", "time"))


# -- the wrapper ------------------------------------------------------------------------------
def test_vector_wrapper_is_taken_by_mo_gymnasiums_own_wrappers() -> None:
    env = VectorReward(gym.make("CliffWalking-v1"), terms={"steps": lambda t: -1.0}, keep_reward="task")
    assert env.objective_names == ("task", "steps") and env.reward_space.shape == (2,)
    linear = mo_gym.wrappers.LinearReward(env, weight=np.array([1.0, 0.5]))
    linear.reset(seed=0)
    _, scalar, _, _, info = linear.step(0)  # up from the start: -1 from the task, -1 from the term
    np.testing.assert_allclose(info["vector_reward"], [-1.0, -1.0])
    assert scalar == pytest.approx(-1.5)


def test_vector_wrapper_passes_an_mo_env_through_with_names() -> None:
    env = _dst()
    env.reset(seed=0)
    _, reward, *_ = env.step(1)  # down: the first treasure
    assert env.objective_names == ("treasure", "time")
    np.testing.assert_allclose(reward, [0.7, -1.0], rtol=1e-6)


def test_vector_wrapper_refuses_bad_names_and_non_finite_terms() -> None:
    with pytest.raises(ConfigError, match="names has 1"):
        VectorReward(mo_gym.make("deep-sea-treasure-v0"), names=("treasure",))
    with pytest.raises(ConfigError, match="repeat"):
        VectorReward(gym.make("CliffWalking-v1"), terms={"reward": lambda t: 0.0})
    env = VectorReward(gym.make("CliffWalking-v1"), terms={"bad": lambda t: float("nan")})
    env.reset(seed=0)
    with pytest.raises(InputError, match="bad"):
        env.step(0)


# -- deep sea treasure ------------------------------------------------------------------------
@pytest.mark.slow
def test_weight_sweep_with_tabular_q_learning_recovers_the_published_deep_sea_treasure_front() -> None:
    gamma = 0.99
    found = np.array(q_learning_front(_dst, gamma=gamma, episodes=150))
    published = np.array(mo_gym.make("deep-sea-treasure-v0").unwrapped.pareto_front(gamma=gamma))
    published = published[np.argsort(published[:, 0])]
    assert found.shape == published.shape == (10, 2)
    np.testing.assert_allclose(found, published, atol=1e-4)


def test_linear_support_is_for_two_objectives() -> None:
    from rewardlab.envs.multiobj import linear_support

    with pytest.raises(ConfigError, match="two objectives"):
        linear_support(lambda w: np.zeros(3))
    # (2, 2) is on the convex hull and found; (1.4, 1.4) is Pareto-optimal but under the hull
    # (x + y < 3), and no weighted sum ever prefers it: linear scalarisation cannot reach it
    points = np.array([[0.0, 3.0], [2.0, 2.0], [3.0, 0.0]])
    found = linear_support(lambda w: points[np.argmax(points @ w)])
    assert [tuple(v) for v in found] == [(0.0, 3.0), (2.0, 2.0), (3.0, 0.0)]
    concave = np.array([[0.0, 3.0], [1.4, 1.4], [3.0, 0.0]])
    assert [tuple(v) for v in linear_support(lambda w: concave[np.argmax(concave @ w)])] == [(0.0, 3.0), (3.0, 0.0)]


# -- heterogeneous discounts (Pitis 2023) -----------------------------------------------------
# The paper's counterexample (its Section 2, "the Procrastinator's Peril"): one state, two actions.
# Play pays the play objective 0.5, discounted by 0.5; work pays the work objective 0.3,
# discounted by 0.9; the principal's utility sums the two discounted returns.
WORK, PLAY = 0, 1
PERIL_GAMMAS = (0.5, 0.9)  # (play, work)


class _Peril(gym.Env[int, int]):
    observation_space = gym.spaces.Discrete(1)
    action_space = gym.spaces.Discrete(2)
    reward_space = gym.spaces.Box(0.0, 0.5, (2,))

    def __init__(self, horizon: int = 120):
        self.horizon, self.t = horizon, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return 0, {}

    def step(self, action: int) -> tuple[int, np.ndarray, bool, bool, dict[str, Any]]:
        self.t += 1
        reward = np.array([0.5, 0.0]) if action == PLAY else np.array([0.0, 0.3])
        return 0, reward, False, self.t >= self.horizon, {}


def _utility(actions: list[int]) -> float:
    """The principal's value of a trajectory: each objective's own discounted return, summed."""
    env = _Peril(horizon=len(actions))
    env.reset()
    total = 0.0
    for t, a in enumerate(actions):
        r = env.step(a)[1]
        total += sum(g**t * x for g, x in zip(PERIL_GAMMAS, r, strict=True))
    return total


def _plan(plays: int, length: int = 400) -> list[int]:
    return [PLAY] * plays + [WORK] * (length - plays)


def test_the_perils_trajectory_values_are_the_papers() -> None:
    always_play, always_work, play_once, play_twice = (_utility(_plan(k)) for k in (400, 0, 1, 2))
    assert [round(v, 2) for v in (always_play, always_work, play_once, play_twice)] == [1.00, 3.00, 3.20, 3.18]
    # the best plan from any day is to play that day and work from the next: re-planned every
    # day (the state never changes), it plays forever and ends with the worst of the four
    best_first = max(range(50), key=lambda k: _utility(_plan(k)))
    assert best_first == 1 and always_play == min(always_play, always_work, play_once, play_twice)


def test_no_markovian_aggregation_of_the_peril_plays_once_then_works() -> None:
    # one state, so a Markovian reward is a reward per action; under any one discount its
    # optimal policy is stationary: always play (worth 1.0 to the principal) or always work (3.0)
    best, stationary = _utility(_plan(1)), {PLAY: _utility(_plan(400)), WORK: _utility(_plan(0))}
    for r_work, r_play, gamma in itertools.product(np.linspace(-1, 1, 21), np.linspace(-1, 1, 21), (0.5, 0.7, 0.9, 0.99)):
        q = np.array([r_work, r_play]) / (1 - gamma)
        assert stationary[int(np.argmax(q))] <= 3.0 + 1e-9 < best
    # and a learner on the equal-weight sum under either objective's discount agrees
    for gamma in PERIL_GAMMAS:
        env = VectorReward(_Peril(), names=("play", "work"))
        q_table = tabular_q(env, [1.0, 1.0], episodes=30, gamma=gamma, optimism=10.0)
        assert _utility([int(np.argmax(q_table[0]))] * 400) <= 3.0 + 1e-9


def _learned_plan(history: float) -> list[int]:
    env = HeterogeneousDiscounts(_Peril(), [1.0, 1.0], PERIL_GAMMAS, history=history)  # γ_Σ = 0.9, the largest
    # the factor of play changes every step, so each step is a new state: enough episodes for
    # the values to reach back from the horizon
    q = tabular_q(env, [1.0], episodes=200, gamma=env.gamma, optimism=10.0)
    obs, _ = env.reset(seed=0)
    actions, truncated = [], False
    while not truncated:
        actions.append(int(np.argmax(q[obs])))
        obs, _, _, truncated, _ = env.step(actions[-1])
    return actions


def test_one_factor_per_objective_plays_once_then_works_forever() -> None:
    actions = _learned_plan(history=1.0)
    assert actions == _plan(1, len(actions))
    assert _utility(actions) == pytest.approx(3.2, abs=1e-3)


def test_historical_discounting_plays_once_when_high_and_forever_at_zero() -> None:
    # Section 5.2: a high η still returns "play once, then work"; η = 0 makes every step its
    # own decision maker with the starting preferences, so play wins every day
    high = _learned_plan(history=0.95)
    assert high == _plan(1, len(high))
    assert _learned_plan(history=0.0) == [PLAY] * len(high)
    with pytest.raises(ConfigError, match="history"):
        DiscountAggregator([1.0], [0.9], history=1.5)


def test_the_papers_weights_after_one_play_with_an_undiscounted_aggregate() -> None:
    # Section 4.1's instance: w = (1, 1), γ_Σ = 1; after one play the weights are (0.5, 0.9)
    agg = DiscountAggregator([1.0, 1.0], PERIL_GAMMAS, gamma=1.0)
    assert agg([0.5, 0.0]) == 0.5
    assert agg.state.tolist() == pytest.approx([0.5, 0.9]) and agg.factors.tolist() == pytest.approx([0.5, 0.9])
    agg.reset()
    assert agg.factors.tolist() == [1.0, 1.0]


# A second case, episodic: the same choice reached at different times. States: 0 = P (a forced step), 1 = C (the choice), 2 = done. Episode A starts at C (t = 0),
# episode B at P, reaching C at t = 1. At C, action 0 pays objective 1 (1.0) and action 1 pays
# objective 2 (0.8). Objective 1 is discounted by 0.5, objective 2 by 0.9, equal weights.
GAMMAS, WEIGHTS, C_REWARDS = (0.5, 0.9), (1.0, 1.0), {0: (1.0, 0.0), 1: (0.0, 0.8)}


class _TwoEntries(gym.Env[int, int]):
    observation_space = gym.spaces.Discrete(3)
    action_space = gym.spaces.Discrete(2)
    reward_space = gym.spaces.Box(0.0, 1.0, (2,))  # MO-Gymnasium's convention: a vector reward

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        self.state = 1 if seed is not None and seed % 2 == 0 else 0  # even seeds: episode A
        return self.state, {}

    def step(self, action: int) -> tuple[int, np.ndarray, bool, bool, dict[str, Any]]:
        if self.state == 0:
            self.state = 1
            return 1, np.zeros(2), False, False, {}
        self.state = 2
        return 2, np.asarray(C_REWARDS[action], dtype=np.float64), True, False, {}


def _consistent_choice(arrival: int) -> int:
    """The choice at C that maximises the principal's utility Σ_i w_i Σ_t γ_i^t r_i from the
    start of the episode, when C is reached at time `arrival`."""
    utility = [sum(w * g**arrival * r for w, g, r in zip(WEIGHTS, GAMMAS, C_REWARDS[a], strict=True)) for a in (0, 1)]
    return int(np.argmax(utility))


def _markov_choice(reward: np.ndarray, gamma: float) -> tuple[int, int]:
    """The action an optimal policy takes at C in episodes A and B, for a Markovian scalar
    reward `reward[s, a]` (s in P, C) under one discount, by value iteration and rollout."""
    q = np.zeros((2, 2))
    for _ in range(3):
        q = np.array([reward[0] + gamma * q[1].max(), reward[1]])  # P -> C, C -> done
    return int(np.argmax(q[1])), int(np.argmax(q[1]))  # episode B reaches the same C row


def test_the_consistent_choice_at_c_depends_on_when_c_is_reached() -> None:
    assert (_consistent_choice(0), _consistent_choice(1)) == (0, 1)


def test_every_markovian_aggregation_fails_one_episode() -> None:
    rng = np.random.default_rng(0)
    aggregations = [np.array([[w1 * 0.0 + w2 * 0.0] * 2, [w1 * C_REWARDS[a][0] + w2 * C_REWARDS[a][1] for a in (0, 1)]])
                    for w1, w2 in itertools.product(np.linspace(0, 2, 21), repeat=2)]  # fmt: skip
    aggregations += [rng.normal(size=(2, 2)) for _ in range(200)]  # any reward of (state, action)
    for reward, gamma in itertools.product(aggregations, (0.5, 0.7, 0.9, 1.0)):
        a_choice, b_choice = _markov_choice(reward, gamma)
        assert (a_choice, b_choice) != (_consistent_choice(0), _consistent_choice(1))
    # and a real learner agrees: Q-learning on the equal-weight sum serves one episode wrongly
    for gamma in GAMMAS:
        env = VectorReward(_TwoEntries(), names=("one", "two"))
        q = tabular_q(env, WEIGHTS, episodes=20, gamma=gamma)
        assert _served_wrongly(env, q, [1.0, 1.0], gamma) >= 1


def _served_wrongly(env: gym.Env[Any, Any], q: dict[Any, np.ndarray], weights: list[float], gamma: float) -> int:
    """In how many of the two episodes the greedy policy of `q` misses the principal's utility."""
    wrong = 0
    for seed, arrival in ((0, 0), (1, 1)):
        env.reset(seed=seed)
        ret = greedy_return_from(env, q, seed)
        best = _consistent_choice(arrival)
        expected = [g**arrival * r for g, r in zip(GAMMAS, C_REWARDS[best], strict=True)]
        wrong += not np.allclose(ret, expected)
    del weights, gamma
    return wrong


def greedy_return_from(env: gym.Env[Any, Any], q: dict[Any, np.ndarray], seed: int) -> np.ndarray:
    """Each objective's own discounted return (γ_i) of the greedy policy from `reset(seed)`."""
    obs, _ = env.reset(seed=seed)
    total, t, done = np.zeros(2), 0, False
    while not done:
        obs, r, done, _, info = env.step(int(np.argmax(q[obs])))
        total += np.asarray(GAMMAS) ** t * np.asarray(info.get("vector_reward", r), dtype=np.float64)
        t += 1
    return total


def test_the_one_parameter_per_objective_aggregation_makes_both_consistent_choices() -> None:
    env = HeterogeneousDiscounts(_TwoEntries(), WEIGHTS, GAMMAS)
    q = tabular_q(env, [1.0], episodes=40, gamma=env.gamma)
    at_c_in_a = q[(1, (1.0, 1.0))]
    at_c_in_b = q[(1, (round(0.5 / 0.9, 12), 1.0))]
    assert (int(np.argmax(at_c_in_a)), int(np.argmax(at_c_in_b))) == (_consistent_choice(0), _consistent_choice(1))
    assert _served_wrongly(env, q, [1.0], env.gamma) == 0


def test_aggregated_return_equals_each_objectives_own_discounted_return() -> None:
    rng = np.random.default_rng(1)
    for _ in range(20):
        k, steps = rng.integers(1, 4), rng.integers(1, 30)
        weights, gammas = rng.random(k), rng.uniform(0.3, 1.0, k)
        rewards = rng.normal(size=(steps, k))
        agg = DiscountAggregator(weights, gammas)
        total = sum(agg.gamma**t * agg(r) for t, r in enumerate(rewards))
        own = sum(w * sum(g**t * r for t, r in enumerate(rewards[:, i])) for i, (w, g) in enumerate(zip(weights, gammas, strict=True)))
        assert total == pytest.approx(own)


def test_aggregator_refuses_bad_discounts() -> None:
    with pytest.raises(ConfigError, match="discount"):
        DiscountAggregator([1.0], [1.5])
    with pytest.raises(ConfigError, match="one entry per objective"):
        DiscountAggregator([1.0, 1.0], [0.9])


# -- MD3QN joint returns ----------------------------------------------------------------------
def test_joint_return_particles_recover_the_correlation_of_two_sources() -> None:
    """Two steps: s0 -> s1 -> end. Each step pays two correlated sources: at s0 with
    correlation 0.9 and scale 1, at s1 with correlation -0.5 and scale 2. The return at s1 has
    correlation -0.5; at s0 it is (0.9 - 0.5·4γ²) / (1 + 4γ²), which only bootstrapping through
    the joint distribution of s1 gets right."""
    rng = np.random.default_rng(0)
    gamma, batch = 0.9, 64

    def pairs(rho: float, sigma: float) -> np.ndarray:
        x, y = rng.normal(size=(2, batch))
        return sigma * np.stack([x, rho * x + np.sqrt(1 - rho**2) * y], axis=1)

    joint = JointReturns(2, gamma=gamma, particles=64, lr=0.5)
    for _ in range(300):
        joint.update("s1", pairs(-0.5, 2.0), [None] * batch)
        joint.update("s0", pairs(0.9, 1.0), ["s1"] * batch)
    expected = (0.9 - 0.5 * 4 * gamma**2) / (1 + 4 * gamma**2)
    assert joint.correlation("s1") == pytest.approx(-0.5, abs=0.1)
    assert joint.correlation("s0") == pytest.approx(expected, abs=0.1)
    np.testing.assert_allclose(joint.mean("s0"), [0.0, 0.0], atol=0.3)
    # the particles are closer (in MMD) to the true joint return at s1 than to one with the same
    # marginals and no correlation: the joint is learned, not two marginals side by side
    big = 800
    x, y = np.random.default_rng(5).normal(size=(2, big))
    truth = 2.0 * np.stack([x, -0.5 * x + np.sqrt(0.75) * y], axis=1)
    independent = 2.0 * np.stack([x, np.random.default_rng(6).normal(size=big)], axis=1)
    assert mmd_squared(joint.particles("s1"), truth) < mmd_squared(joint.particles("s1"), independent)


def test_joint_returns_refuses_a_reward_of_the_wrong_width() -> None:
    with pytest.raises(ConfigError, match="rewards must be"):
        JointReturns(2).update("s", [[1.0, 2.0, 3.0]], [None])
