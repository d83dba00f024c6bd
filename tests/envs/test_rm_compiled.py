"""The compiled transition table agrees with guard evaluation; the wrapper's fast paths agree with the slow ones."""

from __future__ import annotations

import itertools
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardlab.envs.officeworld import OfficeWorld, office_labels, office_task
from rewardlab.envs.rm import NoTransitionError, RewardMachine
from rewardlab.envs.rm.compiled import HOP_FIELDS, CompiledMachines
from rewardlab.envs.rm.labels import InfoLabels
from rewardlab.envs.rm.shaping import rm_potentials
from rewardlab.envs.rm.wrapper import RewardMachineWrapper
from rewardlab.errors import InputError, SpecError

PROPS = ("a", "b", "c")
#: every label set over PROPS, plus one with a label no machine mentions
ALPHABET = [frozenset(c) for r in range(len(PROPS) + 1) for c in itertools.combinations(PROPS, r)] + [frozenset({"a", "zz"})]
F = dict(zip(HOP_FIELDS, range(len(HOP_FIELDS)), strict=True))

# A guard is a tree: ("p", name) | ("not", t) | ("and", t, t) | ("or", t, t) | ("const", bool).
_leaf = st.one_of(st.sampled_from(PROPS).map(lambda p: ("p", p)), st.booleans().map(lambda b: ("const", b)))
guards = st.recursive(
    _leaf,
    lambda kids: st.one_of(
        kids.map(lambda t: ("not", t)),
        st.tuples(st.just("and"), kids, kids),
        st.tuples(st.just("or"), kids, kids),
    ),
    max_leaves=6,
)


def render(t: tuple[Any, ...]) -> str:
    if t[0] == "p":
        return t[1]
    if t[0] == "const":
        return "True" if t[1] else "False"
    if t[0] == "not":
        return f"!({render(t[1])})"
    op = " & " if t[0] == "and" else " | "
    return f"({render(t[1])}{op}{render(t[2])})"


def holds(t: tuple[Any, ...], labels: frozenset[str]) -> bool:
    """The reference semantics, written independently of the guard parser."""
    if t[0] == "p":
        return t[1] in labels
    if t[0] == "const":
        return bool(t[1])
    if t[0] == "not":
        return not holds(t[1], labels)
    left, right = holds(t[1], labels), holds(t[2], labels)
    return left and right if t[0] == "and" else left or right


@st.composite
def machines(draw: st.DrawFn) -> tuple[RewardMachine, list[tuple[int, int, tuple[Any, ...], float]]]:
    """A random machine (first matching edge wins) and its edges as (src, dst, guard tree, reward)."""
    n = draw(st.integers(2, 4))
    accepting = draw(st.sets(st.integers(1, n), max_size=1))
    rejecting = draw(st.sets(st.integers(1, n), max_size=1)) - accepting
    live = [u for u in range(n + 1) if u not in accepting | rejecting]
    edges = draw(
        st.lists(
            st.tuples(st.sampled_from(live), st.integers(0, n), guards, st.sampled_from([0.0, 1.0, -0.5])),
            min_size=1,
            max_size=8,
        )
    )
    rm = RewardMachine(
        [{"from": str(s), "to": str(d), "guard": render(g), "reward": r} for s, d, g, r in edges],
        initial="0",
        accepting=[str(u) for u in accepting],
        rejecting=[str(u) for u in rejecting],
        no_match=draw(st.sampled_from(["stay", "reject", "error"])),
        check_determinism=False,  # file order decides, which the reference below follows too
    )
    return rm, edges


def reference(rm: RewardMachine, edges: list[Any], state: str, labels: frozenset[str]) -> tuple[str, float, bool, bool] | None:
    """(next, reward, accepted, rejected) by evaluating the guard trees; None = no edge, policy error."""
    for src, dst, tree, reward in edges:
        if str(src) == state and holds(tree, labels):
            return str(dst), reward, str(dst) in rm.accepting, str(dst) in rm.rejecting
    if rm.no_match == "stay":
        return state, 0.0, False, False
    if rm.no_match == "reject":
        return state, 0.0, False, True
    return None


@settings(max_examples=60, deadline=None)
@given(st.lists(machines(), min_size=1, max_size=2), st.sampled_from([None, 0.9]))
def test_compiled_table_agrees_with_guard_evaluation(tasks: list[Any], gamma: float | None) -> None:
    rms = [rm for rm, _ in tasks]
    table = CompiledMachines(rms, shaping_gamma=gamma)
    for g, (t, u) in enumerate(table.owner):
        rm, edges = tasks[t]
        state = rm.states[u]
        phi = rm_potentials(rm, gamma=gamma) if gamma else np.zeros(rm.n_states)
        for labels in ALPHABET:
            want = reference(rm, edges, state, labels)
            if rm.is_terminal(state) or want is None:
                with pytest.raises(NoTransitionError):
                    table.hop(g, labels)
                continue
            hop = table.hop(g, labels)
            nxt, r, acc, rej = want
            v = rm.index[nxt]
            assert hop[F["g"]] == table.offsets[t] + v and hop[F["node"]] is table.nodes[hop[F["g"]]]
            assert (hop[F["state"]], hop[F["rm_reward"]], hop[F["ends"]]) == (nxt, r, acc or rej)
            assert hop[F["labels"]] == labels and table.nodes[g][labels] is hop  # stored for the next time
            # shaping: r + gamma * Phi(u') - Phi(u), Phi(terminal) = 0, and only -Phi(u) if the env ends
            shaped = r + (0.0 if (acc or rej) else (gamma or 0.0) * phi[v]) - phi[u]
            assert hop[F["reward"]] == pytest.approx(shaped) and hop[F["reward_if_env_ends"]] == pytest.approx(r - phi[u])
            extra = hop[F["extra"]] or {}
            assert extra.get("rm/task", t) == t and (len(rms) == 1) == ("rm/task" not in extra)
            assert (extra.get("rm/accepted"), extra.get("rm/rejected")) == ((acc, rej) if (acc or rej) else (None, None))


def test_eager_compile_equals_lazy_hops_and_converts_label_iterables() -> None:
    rms = [office_task("coffee_mail"), office_task("patrol")]
    eager, lazy = CompiledMachines(rms), CompiledMachines(rms)
    letters = [frozenset(), *(frozenset(p) for p in "abcdefgn")]
    eager.compile(letters)
    for g, node in enumerate(eager.nodes):
        for labels, hop in node.items():
            got = lazy.hop(g, set(labels))
            assert got[1:] == hop[1:] and got is lazy.hop(g, sorted(labels)) and got[0] is lazy.nodes[got[1]]
    with pytest.raises(InputError, match="frozenset"):
        lazy.hop(0, "f")  # a string is not a set of labels
    with pytest.raises(SpecError, match="payload"):
        CompiledMachines(rms, payload=[None])


def test_info_labels_inline_path_equals_calling_the_function() -> None:
    """The wrapper's inline read of InfoLabels gives exactly what calling a labelling function gives."""

    def called(obs, action, next_obs, info):  # type: ignore[no-untyped-def]
        return office_labels(obs, action, next_obs, info)

    rms = [office_task("coffee_mail"), office_task("patrol")]
    for mode in ("dict", "onehot"):
        fast = RewardMachineWrapper(OfficeWorld(max_episode_steps=120), rms, office_labels, obs_mode=mode, shaping_gamma=0.9)
        slow = RewardMachineWrapper(OfficeWorld(max_episode_steps=120), rms, called, obs_mode=mode, shaping_gamma=0.9)
        assert fast._info_key == "labels" and slow._info_key is None
        rng = np.random.default_rng(5)
        fast.reset(seed=0), slow.reset(seed=0)
        for _ in range(1500):
            a = int(rng.integers(4))
            o1, r1, t1, tr1, i1 = fast.step(a)
            o2, r2, t2, tr2, i2 = slow.step(a)
            assert (r1, t1, tr1, i1) == (r2, t2, tr2, i2)
            if mode == "dict":
                assert np.array_equal(o1["obs"], o2["obs"]) and o1["rm"] == o2["rm"]
            else:
                assert np.array_equal(o1, o2)
            (p1, a1, n1, *rest1), (p2, a2, n2, *rest2) = fast.last_transition, slow.last_transition  # type: ignore[misc]
            assert np.array_equal(p1, p2) and a1 == a2 and np.array_equal(n1, n2) and rest1 == rest2
            if t1 or tr1:
                fast.reset(), slow.reset()


def test_info_labels_fallback_and_missing_key() -> None:
    lab = InfoLabels("events")
    with pytest.raises(InputError, match="events"):
        lab(None, 0, None, {"other": 1})
    assert InfoLabels("events", fallback=lambda *a: frozenset({"x"}))(None, 0, None, {}) == {"x"}
    # office_labels falls back to the cell of next_obs: a wrapper over an env without info labels
    env = RewardMachineWrapper(_NoInfoOffice(), office_task("coffee"), office_labels)
    env.reset()
    *_, info = env.step(3)  # left from (2, 1) to landmark a at (1, 1)
    assert info["rm/labels"] == {"a"} and info["rm/state"] == "0" and "labels" not in info
    env.step(1)
    env.step(1)
    _, _, term, _, info = env.step(1)  # (4, 1) is a decoration: the coffee machine rejects
    assert info["rm/labels"] == {"n"} and term and info["rm/rejected"]


class _NoInfoOffice(gym.Wrapper):  # type: ignore[type-arg]
    """The office world with its info emptied (labels must come from the observation)."""

    def __init__(self) -> None:
        super().__init__(OfficeWorld())

    def step(self, action: int):  # type: ignore[no-untyped-def]
        obs, r, term, trunc, _ = self.env.step(action)
        return obs, r, term, trunc, {}


def test_last_transition_survives_reset_and_starts_none() -> None:
    env = RewardMachineWrapper(OfficeWorld(), office_task("coffee"), office_labels)
    env.reset()
    assert env.last_transition is None
    env.step(1)  # (2, 1) -> (3, 1)
    env.step(1)  # (3, 1) -> (4, 1): a decoration, the machine rejects
    prev, action, nxt, labels, term = env.last_transition  # type: ignore[misc]
    assert (prev.tolist(), action, nxt.tolist(), labels, term) == ([3, 1], 1, [4, 1], {"n"}, False)
    env.reset()  # SB3's vectorised envs reset before callbacks read the last transition
    assert env.last_transition[2].tolist() == [4, 1]  # type: ignore[index]
    env.step(0)
    assert env.last_transition[0].tolist() == [2, 1]  # type: ignore[index]


class _Int32Office(gym.Wrapper):  # type: ignore[type-arg]
    """Declares int64 observations but returns int32 ones (outside its declared space)."""

    def __init__(self) -> None:
        super().__init__(OfficeWorld())

    def reset(self, **kw: Any):  # type: ignore[no-untyped-def]
        obs, info = self.env.reset(**kw)
        return obs.astype(np.int32), info

    def step(self, action: int):  # type: ignore[no-untyped-def]
        obs, *rest = self.env.step(action)
        return (obs.astype(np.int32), *rest)


def test_onehot_memo_only_keeps_observations_of_the_declared_dtype() -> None:
    env = RewardMachineWrapper(_Int32Office(), office_task("coffee"), office_labels, obs_mode="onehot")
    obs, _ = env.reset()
    for a in (0, 1, 2, 3, 0, 0):
        obs, *_ = env.step(a)
    x, y = env.env.unwrapped._obs().tolist()
    assert np.flatnonzero(obs).tolist() == [x, 12 + y, 21 + env.u] and obs.flags.writeable
    assert sum(len(m) for m in env.codec.memo) == 0  # type: ignore[attr-defined]  # int32 bytes never enter the int64-keyed memo
