"""Preferences, intrinsic rewards, redistribution, STARC, hierarchical and timed RMs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rewardlab.envs.gridworld import GridMDP, policy_value, value_iteration
from rewardlab.envs.officeworld import OFFICE_ALPHABET
from rewardlab.envs.preferences import (
    PreferenceDataset,
    PreferenceRewardModel,
    SyntheticTeacher,
    TeacherConfig,
    learn_grid_reward,
    preference_grid,
    random_segments,
    select_queries,
)
from rewardlab.envs.redistribution import (
    DelayedChain,
    LeastSquaresRedistribution,
    chain_q_learning,
    smooth_rewards,
    uniform_redistribution,
)
from rewardlab.envs.rm.hierarchical import HierarchicalRM
from rewardlab.envs.rm.timed import TimedRM
from rewardlab.envs.starc import starc_distance
from rewardlab.errors import SpecError

torch = pytest.importorskip("torch")

# -- preferences ---------------------------------------------------------------------------


def test_oracle_teacher_prefers_higher_return() -> None:
    r1, r2 = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]), np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    assert SyntheticTeacher().label(r1, r2).tolist() == [1.0, 0.0, 0.5]


def test_teacher_myopia_equal_skip_and_mistakes() -> None:
    early, late = np.array([[1.0, 0.0]]), np.array([[0.0, 0.9]])
    assert SyntheticTeacher().label(early, late)[0] == 1.0
    assert SyntheticTeacher(TeacherConfig(gamma=0.5)).label(early, late)[0] == 0.0  # recent steps count more
    assert SyntheticTeacher(TeacherConfig(equal=0.2)).label(early, late)[0] == 0.5
    assert math.isnan(SyntheticTeacher(TeacherConfig(skip=2.0)).label(early, late)[0])
    many1, many2 = np.ones((4000, 2)), np.zeros((4000, 2))
    flipped = 1 - SyntheticTeacher(TeacherConfig(eps=0.2), seed=1).label(many1, many2).mean()
    assert 0.17 < flipped < 0.23
    noisy = SyntheticTeacher(TeacherConfig(beta=1.0), seed=1).label(many1, many2).mean()
    assert noisy == pytest.approx(1 / (1 + math.exp(-2.0)), abs=0.03)
    with pytest.raises(SpecError):
        TeacherConfig(beta=-1)


def test_bt_linear_model_recovers_reward_and_disagreement_selects() -> None:
    mdp = preference_grid()
    rng = np.random.default_rng(0)
    f1, r1 = random_segments(mdp, 300, 8, rng)
    f2, r2 = random_segments(mdp, 300, 8, rng)
    model = PreferenceRewardModel(mdp.n_states, ensemble=3, seed=0)
    model.fit(PreferenceDataset(f1, f2, SyntheticTeacher().label(r1, r2)))
    learned = model.reward(np.eye(mdp.n_states, dtype=np.float32))
    assert np.corrcoef(learned, mdp.reward)[0, 1] > 0.9
    idx = select_queries(model, f1[:50], f2[:50], 5)
    spread = model.preference_probs(f1[:50], f2[:50]).std(axis=0)
    assert spread[idx].min() >= np.sort(spread)[-5] - 1e-12


@pytest.mark.slow
def test_bt_torch_mlp_improves_held_out_accuracy() -> None:
    mdp = preference_grid()
    rng = np.random.default_rng(1)
    f1, r1 = random_segments(mdp, 240, 6, rng)
    f2, r2 = random_segments(mdp, 240, 6, rng)
    y = SyntheticTeacher().label(r1, r2)
    model = PreferenceRewardModel(mdp.n_states, hidden=16, ensemble=1, seed=0)
    decided = y[200:] != 0.5

    def accuracy() -> float:
        p = model.preference_probs(f1[200:], f2[200:])[0]
        return float(((p > 0.5) == (y[200:] == 1.0))[decided].mean())

    before = accuracy()
    model.fit(PreferenceDataset(f1[:200], f2[:200], y[:200]), epochs=150)
    assert accuracy() > max(before, 0.8)


def test_learned_reward_policy_reaches_true_return() -> None:
    results = [learn_grid_reward(preference_grid(), 128, seed=s).normalised_return for s in range(3)]
    assert min(results) > 0.9, results


def test_learned_reward_wrapper_swaps_reward() -> None:
    from rewardlab.envs.preferences import LearnedRewardWrapper

    mdp = preference_grid()
    model = PreferenceRewardModel(mdp.n_states, ensemble=1)
    model.weights[0] = np.arange(mdp.n_states, dtype=float)
    env = LearnedRewardWrapper(mdp.to_env(), model, lambda o, a, o2: np.eye(mdp.n_states)[o2])
    env.reset(seed=0)
    obs, r, *_, info = env.step(1)  # right: (0,0) -> (1,0) = state 1
    assert obs == 1 and r == 1.0 and info["reward/env"] == 0.0


def test_empty_or_skipped_dataset_is_an_error() -> None:
    ds = PreferenceDataset(np.zeros((2, 3, 4)), np.zeros((2, 3, 4)), np.array([np.nan, np.nan]))
    with pytest.raises(SpecError, match="no answered comparisons"):
        PreferenceRewardModel(4).fit(ds)
    with pytest.raises(SpecError, match="equal shape"):
        PreferenceDataset(np.zeros((2, 3, 4)), np.zeros((2, 3, 5)), np.zeros(2))


# -- intrinsic -------------------------------------------------------------------------------


def test_count_and_hashed_count_bonuses_decay_with_visits() -> None:
    from rewardlab.envs.intrinsic import CountBonus, DecaySchedule, HashedCountBonus

    c = CountBonus(5)
    s = np.array([3])
    assert c.reward(s, s, s)[0] == 1.0
    for _ in range(3):
        c.update(s, s, s)
    assert c.reward(s, s, s)[0] == pytest.approx(1 / math.sqrt(3))
    h = HashedCountBonus(8, bits=8)
    x = np.ones((1, 8))
    first = h.reward(x, None, x)[0]  # type: ignore[arg-type]
    h.update(x, None, x)  # type: ignore[arg-type]
    h.update(x, None, x)  # type: ignore[arg-type]
    assert h.reward(x, None, x)[0] < first  # type: ignore[arg-type]
    assert DecaySchedule(start=2.0, decay=0.5)(2) == 0.5 and DecaySchedule(steps=10)(5) == 0.5
    with pytest.raises(SpecError, match="exactly one"):
        DecaySchedule(decay=0.9, steps=10)


def test_rnd_bonus_falls_on_seen_inputs() -> None:
    from rewardlab.envs.intrinsic import RNDBonus

    rnd = RNDBonus(6, seed=0, epochs=20)
    seen, novel = np.eye(6, dtype=np.float32)[:3], np.eye(6, dtype=np.float32)[3:]
    for _ in range(20):
        rnd.update(seen, None, seen)  # type: ignore[arg-type]
    assert rnd.reward(None, None, seen).mean() < 0.5 * rnd.reward(None, None, novel).mean()  # type: ignore[arg-type]


@pytest.mark.slow
def test_noisy_tv_distracts_icm_but_not_the_curiosity_critic() -> None:
    """Same seeds, same agent, same warm-up: only the bonus differs (a random walk: 4% on the TV)."""
    from rewardlab.envs.intrinsic import CuriosityCriticBonus, ICMBonus
    from rewardlab.envs.noisy_tv import noisy_tv_rollout

    torch.set_num_threads(1)
    dim, seeds = 25 + 4, range(3)
    icm = [noisy_tv_rollout(ICMBonus(dim, 4, hidden=32, epochs=2, seed=s), seed=s) for s in seeds]
    cc = [noisy_tv_rollout(CuriosityCriticBonus(dim, 4, hidden=32, epochs=2, seed=s), seed=s) for s in seeds]
    for r_icm, r_cc in zip(icm, cc, strict=True):
        # plain prediction error: the TV is the most rewarding thing and the agent stays there
        assert r_icm["tv_bonus"] > 5 * r_icm["other_bonus"] and r_icm["tv_fraction"] > 0.7, r_icm
        # the critic's noise band covers the TV: no bonus there, the agent is not captured
        assert r_cc["tv_bonus"] < r_cc["other_bonus"] and r_cc["tv_fraction"] < 0.15, r_cc
        assert r_icm["tv_fraction"] - r_cc["tv_fraction"] > 0.6


def test_curiosity_critic_still_rewards_novel_transitions() -> None:
    from rewardlab.envs.intrinsic import CuriosityCriticBonus

    torch.set_num_threads(1)
    cc = CuriosityCriticBonus(12, 2, hidden=32, epochs=2, seed=0)
    eye, rng = np.eye(12, dtype=np.float32), np.random.default_rng(0)
    for _ in range(150):  # a deterministic ring over cells 0..5
        s, a = rng.integers(0, 6, 16), rng.integers(0, 2, 16)
        cc.update(eye[s], a, eye[(s + 1 + a) % 6])
    s, a = np.arange(6).repeat(2), np.tile([0, 1], 6)
    seen = cc.reward(eye[s], a, eye[(s + 1 + a) % 6]).mean()
    novel = cc.reward(eye[s + 6], a, eye[6 + (s + 1 + a) % 6]).mean()  # cells 6..11, never seen
    assert novel > 0.5 and novel > seen + 0.5, (seen, novel)
    with pytest.raises(SpecError):
        CuriosityCriticBonus(12, 2, quantile=1.5)


@pytest.mark.slow
def test_ensemble_disagreement_ignores_the_noisy_tv() -> None:
    from rewardlab.envs.intrinsic import DisagreementBonus
    from rewardlab.envs.noisy_tv import noisy_tv_rollout

    torch.set_num_threads(1)
    runs = [noisy_tv_rollout(DisagreementBonus(25 + 4, 4, hidden=32, epochs=2, seed=s), seed=s) for s in range(2)]
    tv = np.mean([r["tv_bonus"] for r in runs])
    other = np.mean([r["other_bonus"] for r in runs])
    assert tv < 2 * other, runs  # noise earns no more than ordinary moves (ICM: ~10x more)


def test_potential_shaping_wrapper_adds_the_potential_difference() -> None:
    from rewardlab.envs.intrinsic import PotentialShapingWrapper

    mdp = GridMDP.make(3, 1, rewards={(2, 0): 1.0}, terminal=[(2, 0)])
    env = PotentialShapingWrapper(mdp.to_env(), lambda s: float(s), gamma=0.9)
    env.reset()
    _, r, *_ = env.step(1)  # 0 -> 1: 0 + 0.9 * 1 - 0
    assert r == pytest.approx(0.9)
    _, r, term, _, info = env.step(1)  # 1 -> 2 terminal: 1 + 0.9 * 0 - 1
    assert term and r == pytest.approx(0.0) and info["reward/env"] == 1.0


@settings(max_examples=30, deadline=None)
@given(arrays(np.float64, 9, elements=st.floats(-3, 3)), st.sampled_from([0.5, 0.9]))
def test_potential_shaping_leaves_optimal_policy_unchanged(phi: np.ndarray, gamma: float) -> None:
    """Q*_shaped(s, a) = Q*(s, a) - Phi(s) (Ng et al. 1999), so greedy actions agree."""
    mdp = GridMDP.make(3, 3, rewards={(2, 2): 1.0, (1, 1): -0.5})
    q = value_iteration(mdp, gamma=gamma)
    # shaping on entering-cell rewards: R'(s, a) = R(s, a) + gamma * Phi(s') - Phi(s)
    r_sa = mdp.transition_rewards() + gamma * phi[mdp.next_state] - phi[:, None]
    q2 = np.zeros_like(q)
    for _ in range(3000):
        q2 = r_sa + gamma * q2.max(axis=1)[mdp.next_state]
    assert np.allclose(q2, q - phi[:, None], atol=1e-6)
    v = policy_value(mdp, q2.argmax(axis=1), gamma=gamma)
    assert np.allclose(v, q.max(axis=1), atol=1e-6)


# -- redistribution -------------------------------------------------------------------------

episodes = arrays(np.float64, st.integers(1, 40), elements=st.floats(-100, 100))


@given(episodes, st.integers(0, 6), st.sampled_from(["triangular", "uniform"]))
def test_smoothing_preserves_the_return(r: np.ndarray, window: int, kernel: str) -> None:
    assert smooth_rewards(r, window=window, kernel=kernel).sum() == pytest.approx(r.sum(), abs=1e-7)


@given(episodes)
def test_uniform_redistribution_preserves_the_return(r: np.ndarray) -> None:
    assert uniform_redistribution(r).sum() == pytest.approx(r.sum(), abs=1e-7)


@given(st.lists(arrays(np.float64, (5, 3), elements=st.floats(-2, 2)), min_size=2, max_size=6), st.floats(-50, 50))
def test_least_squares_redistribution_preserves_the_return(feats: list[np.ndarray], ret: float) -> None:
    model = LeastSquaresRedistribution().fit(feats, [float(f.sum()) for f in feats])
    assert model.redistribute(feats[0], ret).sum() == pytest.approx(ret, abs=1e-6)


def test_redistribution_speeds_up_learning_on_delayed_chain() -> None:
    chain = DelayedChain()
    late = {m: np.mean([chain_q_learning(chain, episodes=60, mode=m, seed=s)[40:].mean() for s in range(3)])
            for m in ("delayed", "least_squares")}
    assert late["least_squares"] > late["delayed"] + 4, late


# -- STARC ------------------------------------------------------------------------------------


def _random_mdp(rng: np.random.Generator, S: int = 4, A: int = 2) -> tuple[np.ndarray, np.ndarray]:
    P = rng.random((S, A, S))
    return P / P.sum(axis=2, keepdims=True), rng.normal(size=(S, A, S))


@given(st.integers(0, 10_000), st.floats(0.1, 10.0))
def test_starc_is_zero_under_shaping_and_scaling(seed: int, scale: float) -> None:
    rng = np.random.default_rng(seed)
    P, R = _random_mdp(rng)
    phi = rng.normal(size=4)
    shaped = scale * R + 0.9 * phi[None, None, :] - phi[:, None, None]
    assert starc_distance(P, R, shaped, gamma=0.9) == pytest.approx(0.0, abs=1e-7)


def test_starc_is_positive_for_different_rewards_and_validates() -> None:
    P, R = _random_mdp(np.random.default_rng(0))
    assert 0.1 < starc_distance(P, R, -R) <= 1.0 + 1e-9
    assert starc_distance(P, R, R) == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(SpecError, match="probability"):
        starc_distance(P * 2, R, R)


# -- hierarchical and timed RMs -------------------------------------------------------------

COFFEE_HRM = {
    "root": {"initial": "0", "accepting": ["2"], "edges": [
        {"from": "0", "to": "1", "call": "coffee"}, {"from": "1", "to": "2", "guard": "g", "reward": 1}]},
    "coffee": {"initial": "0", "accepting": ["1"], "rejecting": ["x"], "edges": [
        {"from": "0", "to": "1", "guard": "f & !n"}, {"from": "0", "to": "x", "guard": "n"}]},
}  # fmt: skip


def test_hierarchical_rm_calls_and_flattens() -> None:
    h = HierarchicalRM(COFFEE_HRM, root="root")
    node, total = h.initial(), 0.0
    for labels in [set(), {"f"}, set(), {"g"}]:
        node, r, acc, rej = h.step(node, labels)
        total += r
    assert acc and total == 1.0
    assert h.step(h.initial(), {"n"})[3]  # a rejecting callee rejects the hierarchy
    flat = h.flatten(OFFICE_ALPHABET)
    rng = np.random.default_rng(0)
    for _ in range(50):  # the flat machine agrees with the hierarchy on random traces
        node, state = h.initial(), flat.initial
        for _ in range(12):
            labels = OFFICE_ALPHABET[rng.integers(len(OFFICE_ALPHABET))]
            node, r, acc, rej = h.step(node, labels)
            step = flat.step(state, labels)
            assert (step.reward, step.accepted, step.rejected) == (r, acc, rej)
            state = step.state
            if acc or rej:
                break


def test_hierarchical_rm_rejects_cycles_and_unknown_calls() -> None:
    loop = {"a": {"initial": "0", "edges": [{"from": "0", "to": "1", "call": "a"}]}}
    with pytest.raises(SpecError, match="must not cycle"):
        HierarchicalRM(loop, root="a")
    with pytest.raises(SpecError, match="unknown machine 'nope'"):
        HierarchicalRM({"a": {"initial": "0", "edges": [{"from": "0", "to": "1", "call": "nope"}]}}, root="a")


def test_timed_rm_deadline_and_delay_cost() -> None:
    t = TimedRM(
        [
            {"from": "0", "to": "1", "guard": "f", "reset": ["x"]},
            {"from": "1", "to": "2", "guard": "g", "when": "x <= 5", "reward": 1},
            {"from": "1", "to": "late", "guard": "True", "when": "x > 5"},
        ],
        initial="0", accepting=["2"], rejecting=["late"], delay_cost={"1": 0.1},
    )  # fmt: skip
    s, total = t.initial_state(), 0.0
    for labels in [{"f"}, set(), set(), {"g"}]:
        s, r, acc, rej = t.step(s, labels)
        total += r
    assert acc and total == pytest.approx(1.0 - 3 * 0.1)
    s = t.initial_state()
    for labels in [{"f"}] + [set()] * 6:
        s, r, acc, rej = t.step(s, labels)
    assert rej
    flat = t.flatten(OFFICE_ALPHABET)
    assert sum(step.reward for step in flat.run([{"f"}, set(), set(), {"g"}])) == pytest.approx(0.7)
    with pytest.raises(SpecError, match="not 'clock op integer'"):
        TimedRM([{"from": "0", "to": "1", "guard": "a", "when": "x >= y"}], initial="0")


def test_hierarchical_rm_is_learned_with_one_option_per_call() -> None:
    """Office world: call 'coffee', then call 'mail', then reach the office (Furelos-Blanco et al.)."""
    from rewardlab.envs.officeworld import START, cell_index, office_transitions
    from rewardlab.envs.rm.hierarchical_learning import train_hierarchical

    def fetch(p: str) -> dict[str, object]:
        return {"initial": "0", "accepting": ["1"], "rejecting": ["x"],
                "edges": [{"from": "0", "to": "1", "guard": f"{p} & !n"}, {"from": "0", "to": "x", "guard": "n"}]}

    h = HierarchicalRM({
        "root": {"initial": "0", "accepting": ["3"], "rejecting": ["x"], "edges": [
            {"from": "0", "to": "1", "call": "coffee"}, {"from": "1", "to": "2", "call": "mail"},
            {"from": "2", "to": "3", "guard": "g & !n", "reward": 1}, {"from": "2", "to": "x", "guard": "n"}]},
        "coffee": fetch("f"), "mail": fetch("e"),
    }, root="root")  # fmt: skip
    nxt, lab = office_transitions()
    run = train_hierarchical(h, next_obs=nxt, obs_label=lab, alphabet=OFFICE_ALPHABET, start=cell_index(*START), steps=30_000)
    assert run.n_options == 3  # two calls and one guard edge (the edge into failure is no option)
    assert run.returns[:20].mean() < 0.3 and run.returns[-50:].mean() > 0.5


def test_model_redistribution_recovers_hidden_step_rewards() -> None:
    from rewardlab.envs.redistribution import ModelRedistribution

    chain, rng = DelayedChain(), np.random.default_rng(0)
    feats, returns, hidden = [], [], []
    for _ in range(60):
        s, phi, r = 0, np.zeros((chain.horizon, 2 * chain.n)), np.zeros(chain.horizon)
        for t in range(chain.horizon):
            a = int(rng.integers(2))
            phi[t, 2 * s + a] = 1.0
            s, r[t] = chain.step(s, a)
        feats.append(phi)
        returns.append(r.sum())
        hidden.append(r)
    model = ModelRedistribution(2 * chain.n, epochs=400).fit(feats, returns)
    pred = model.step_rewards(np.concatenate(feats))
    assert np.corrcoef(pred, np.concatenate(hidden))[0, 1] > 0.9
    assert model.redistribute(feats[0], 7.0).sum() == pytest.approx(7.0, abs=1e-5)
