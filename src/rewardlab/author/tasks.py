"""Finite tasks an author writes rewards for: every transition enumerated, with its true outcome.

A `FiniteTask` is a deterministic episodic MDP given by tables over P states and A actions,
plus what a candidate reward sees of each transition: `(obs, action, next_obs, info)` as plain
dicts. Because the tables are finite, a candidate is evaluated once, in the sandbox, on every
transition in one batch (`rewardlab.author.execute`), and training then reads the reward table.

Two families:

- `office_task_env(name)`: the office world of Toro Icarte et al. (JAIR 2022) with one of its
  tasks; the state is (cell, reward-machine state), and `obs` shows the cell and what has been
  collected so far, never the reward machine's reward;
- `grid_task_env(mdp)`: a `rewardlab.envs.gridworld.GridMDP` whose terminal cells with a
  positive reward are goals and the other terminal cells failures;
- `gym_task_env(env_id)`: a deterministic Gymnasium toy-text env with a transition table `P`
  and one start state (`FrozenLake-v1` with `is_slippery=False`, `CliffWalking-v1`).

`info["success"]` is the task's success signal (the sparse reward); `info["failed"]` marks
a step that ends the episode in failure (a decoration in the office world).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rewardlab._lazy import require
from rewardlab.errors import SpecError

__all__ = ["FiniteTask", "grid_task_env", "gym_task_env", "office_task_env", "task_by_name"]

_ACTIONS = ("up", "right", "down", "left")
#: names of the office propositions in observations (`has_` for things carried)
_OFFICE_FLAGS = {"a": "visited_a", "b": "visited_b", "c": "visited_c", "d": "visited_d",
                 "e": "has_mail", "f": "has_coffee"}  # fmt: skip


@dataclass(frozen=True)
class FiniteTask:
    """A deterministic episodic task as tables, and what a reward sees of each transition.

    Shapes: P states, A actions. `next_state` (P, A) is -1 where the step ends the episode;
    `success` and `failed` (P, A) say how it ended. `transitions[p * A + a]` is the
    `(obs, action, next_obs, info)` of taking action `a` in state `p`.
    """

    name: str
    description: str
    next_state: np.ndarray
    success: np.ndarray
    failed: np.ndarray
    start: int
    transitions: tuple[tuple[dict[str, Any], int, dict[str, Any], dict[str, Any]], ...]
    max_episode_steps: int = 200
    actions: tuple[str, ...] = _ACTIONS
    facts: Mapping[str, Any] = field(default_factory=dict)  # what a template author may use
    goal: str = ""  # the task's goal in words, what an author is asked to reward

    def __post_init__(self) -> None:
        P, A = self.next_state.shape
        if self.success.shape != (P, A) or self.failed.shape != (P, A) or len(self.transitions) != P * A:
            raise SpecError(f"task {self.name!r}: tables and transitions disagree on (P, A) = ({P}, {A})")
        if not 0 <= self.start < P:
            raise SpecError(f"task {self.name!r}: start state {self.start} is not one of the {P} states")

    @property
    def shape(self) -> tuple[int, int]:
        """(P, A)."""
        P, A = self.next_state.shape
        return P, A

    def true_reward(self) -> np.ndarray:
        """The sparse task reward (P, A): 1 on success, else 0."""
        return self.success.astype(float)

    def optimal_steps(self) -> int:
        """Fewest steps from the start to success (breadth-first search); SpecError if unreachable."""
        dist = {self.start: 0}
        queue = deque([self.start])
        while queue:
            p = queue.popleft()
            for a in range(self.shape[1]):
                if self.success[p, a]:
                    return dist[p] + 1
                q = int(self.next_state[p, a])
                if q >= 0 and q not in dist:
                    dist[q] = dist[p] + 1
                    queue.append(q)
        raise SpecError(f"task {self.name!r}: success cannot be reached from the start")


def _collected(tables: Any, task: int, live: np.ndarray, alphabet: Sequence[frozenset[str]]) -> dict[int, frozenset[str]]:
    """Propositions collected on the way to each live RM state (breadth-first from the initial)."""
    initial = int(tables.rm_initial[task])
    seen = {initial: frozenset[str]()}
    queue = deque([initial])
    while queue:
        u = queue.popleft()
        for lab, props in enumerate(alphabet):
            v = int(tables.rm_next[task, u, lab])
            if v != u and v not in seen and live[v] and not tables.rm_reject[task, u, lab]:
                seen[v] = seen[u] | props
                queue.append(v)
    return seen


def office_task_env(name: str = "coffee_mail", *, max_episode_steps: int = 200) -> FiniteTask:
    """The office world with task `name` (`coffee`, `mail`, `coffee_mail`, `patrol`).

    States are (reward-machine state, cell) pairs of the live machine states; entering a
    decoration (`n`) fails, completing the task succeeds, and both end the episode.
    """
    from rewardlab.envs.officeworld import (
        HEIGHT,
        OBJECTS,
        OFFICE_ALPHABET,
        START,
        WIDTH,
        office_problem,
    )

    problem = office_problem((name,))
    live = problem.rm_live[0]
    collected = _collected(problem, 0, live, OFFICE_ALPHABET)
    stages = sorted(collected)  # live RM states reachable from the initial one
    index = {u: i for i, u in enumerate(stages)}
    S, A = problem.next_obs.shape
    P = len(stages) * S
    flags = sorted({_OFFICE_FLAGS[p] for props in collected.values() for p in props if p in _OFFICE_FLAGS})

    def obs(u: int, cell: int, carried: frozenset[str]) -> dict[str, Any]:
        seen = {_OFFICE_FLAGS[p] for p in carried if p in _OFFICE_FLAGS}
        return {"x": cell % WIDTH, "y": cell // WIDTH, "stage": u, **{f: f in seen for f in flags}}

    nxt = np.full((P, A), -1, dtype=np.int64)
    success, failed = np.zeros((P, A), dtype=bool), np.zeros((P, A), dtype=bool)
    transitions = []
    for u in stages:
        for cell in range(S):
            p = index[u] * S + cell
            here = obs(u, cell, collected[u])
            for a in range(A):
                s2 = int(problem.next_obs[cell, a])
                lab = int(problem.obs_label[s2])
                u2 = int(problem.rm_next[0, u, lab])
                done, reject = bool(problem.rm_done[0, u, lab]), bool(problem.rm_reject[0, u, lab])
                success[p, a], failed[p, a] = done and not reject, reject
                if not done:
                    nxt[p, a] = index[u2] * S + s2
                carried = collected.get(u2, collected[u] | OFFICE_ALPHABET[lab])
                info = {"labels": "".join(sorted(OFFICE_ALPHABET[lab])), "success": bool(success[p, a]), "failed": reject}
                transitions.append((here, a, obs(u2 if u2 in index else u, s2, carried), info))
    places: dict[str, list[tuple[int, int]]] = {}
    for (x, y), prop in OBJECTS.items():
        places.setdefault(prop, []).append((x, y))
    targets = _stage_targets(problem, stages, places, OFFICE_ALPHABET)
    description = _office_description(name, flags, places, WIDTH, HEIGHT, START, max_episode_steps)
    depth = {u: len(collected[u]) for u in stages}  # stages completed: propositions collected on the way
    facts = {"width": WIDTH, "height": HEIGHT, "places": places, "stage_targets": targets, "stage_depth": depth,
             "flags": flags}  # fmt: skip
    return FiniteTask(f"office/{name}", description, nxt, success, failed, index[int(problem.rm_initial[0])] * S
                      + START[1] * WIDTH + START[0], tuple(transitions), max_episode_steps, _ACTIONS, facts,
                      _OFFICE_GOALS.get(name, name))  # fmt: skip


def _stage_targets(problem: Any, stages: list[int], places: Mapping[str, list[tuple[int, int]]],
                   alphabet: Sequence[frozenset[str]]) -> dict[int, list[tuple[int, int]]]:  # fmt: skip
    """Cells whose proposition moves each stage forward (not into a rejecting state)."""
    out: dict[int, list[tuple[int, int]]] = {}
    for u in stages:
        cells: list[tuple[int, int]] = []
        for lab, props in enumerate(alphabet):
            moves = int(problem.rm_next[0, u, lab]) != u and not problem.rm_reject[0, u, lab]
            if moves:
                cells += [c for p in props for c in places.get(p, [])]
        out[u] = sorted(set(cells))
    return out


_OFFICE_GOALS = {"coffee": "bring coffee to the office", "mail": "bring the mail to the office",
                 "coffee_mail": "bring both coffee and the mail to the office (in either order)",
                 "patrol": "visit a, b, c and d in this order"}  # fmt: skip


def _office_description(name: str, flags: list[str], places: Mapping[str, list[tuple[int, int]]], width: int,
                        height: int, start: tuple[int, int], horizon: int) -> str:  # fmt: skip
    goal = _OFFICE_GOALS.get(name, name)
    where = "; ".join(f"{p}: {', '.join(map(str, cells))}" for p, cells in sorted(places.items()))
    return (
        f"Office world (Toro Icarte et al. 2022): a {width}x{height} grid of 3x3 rooms joined by doorways; "
        f"walls block some moves (the agent then stays in place). Task: {goal}.\n"
        f"Propositions by cell (x, y): {where} (e = mail, f = coffee, g = office, n = decoration).\n"
        f"obs: dict with x (0..{width - 1}), y (0..{height - 1}), stage (int, the task's progress) and "
        f"booleans {', '.join(flags) or '(none)'} (what has been collected).\n"
        "action: int, 0 = up (y+1), 1 = right (x+1), 2 = down (y-1), 3 = left (x-1).\n"
        "next_obs: the same fields after the move. info: labels (str, the proposition of the cell entered, "
        "'' if none), success (bool, the task is complete: the episode ends), failed (bool, entered a "
        "decoration: the episode ends in failure).\n"
        f"Episodes start at {start} with nothing collected and last at most {horizon} steps; the learner "
        "uses discount 0.9."
    )


def grid_task_env(mdp: Any, *, max_episode_steps: int = 100, name: str = "grid") -> FiniteTask:
    """A `GridMDP` as a task: entering a terminal cell with positive reward succeeds, entering
    any other terminal cell fails; the cell rewards themselves are hidden from `obs` and `info`."""
    S, A = mdp.next_state.shape
    goals = {s for s in mdp.terminal if mdp.reward[s] > 0}
    if not goals:
        raise SpecError(f"grid task {name!r} has no terminal cell with a positive reward to reach")
    nxt = np.where(np.isin(mdp.next_state, list(mdp.terminal)), -1, mdp.next_state).astype(np.int64)
    success = np.isin(mdp.next_state, list(goals))
    failed = np.isin(mdp.next_state, list(set(mdp.terminal) - goals))
    transitions = []
    for s in range(S):
        x, y = mdp.cell(s)
        for a in range(A):
            x2, y2 = mdp.cell(int(mdp.next_state[s, a]))
            info = {"success": bool(success[s, a]), "failed": bool(failed[s, a])}
            transitions.append(({"x": x, "y": y}, a, {"x": x2, "y": y2}, info))
    goal_cells = sorted(mdp.cell(s) for s in goals)
    traps = sorted(mdp.cell(s) for s in set(mdp.terminal) - goals)
    description = (
        f"Gridworld {mdp.width}x{mdp.height}; moves into walls or off the grid stay in place. Goal cells: "
        f"{goal_cells}; trap cells (episode ends in failure): {traps or 'none'}.\n"
        "obs/next_obs: dict with x, y. action: int, 0 = up (y+1), 1 = right (x+1), 2 = down (y-1), 3 = left (x-1).\n"
        "info: success (bool, entered a goal: the episode ends), failed (bool, entered a trap).\n"
        f"Episodes start at {mdp.cell(mdp.start)} and last at most {max_episode_steps} steps; discount 0.9."
    )
    facts = {"width": mdp.width, "height": mdp.height, "stage_targets": {0: goal_cells}, "places": {"goal": goal_cells}}
    goal = f"reach a goal cell {', '.join(map(str, goal_cells))}" + (" without entering a trap" if traps else "")
    return FiniteTask(name, description, nxt, success, failed, int(mdp.start), tuple(transitions),
                      max_episode_steps, _ACTIONS, facts, goal)  # fmt: skip


#: what the actions of the known toy-text grids mean, in order (Gymnasium's docs)
_GYM_ACTIONS = {"FrozenLake": ("left", "down", "right", "up"), "CliffWalking": ("up", "right", "down", "left")}
#: the goal of the known toy-text grids in words; other envs get "reach a goal state"
_GYM_GOALS = {"FrozenLake": "cross the frozen lake from the start to the goal without falling into a hole",
              "CliffWalking": "walk from the start to the goal without stepping off the cliff"}  # fmt: skip


def gym_task_env(env_id: str, *, max_episode_steps: int = 100, **make_kwargs: Any) -> FiniteTask:
    """A Gymnasium env with a deterministic transition table `env.unwrapped.P` and one start state.

    Success is termination with the highest reward any terminating transition pays (the goal
    of FrozenLake, CliffWalking); other terminations are failures (a hole). The env's rewards
    are hidden from the candidate: `obs` is the state (and its `x`, `y` on grid envs).
    """
    require("gymnasium", needed_by="the author tasks")
    import gymnasium as gym

    env = gym.make(env_id, **make_kwargs).unwrapped
    table, start_dist = getattr(env, "P", None), np.asarray(getattr(env, "initial_state_distrib", []))
    if not isinstance(table, dict) or start_dist.size == 0:
        raise SpecError(f"{env_id} has no transition table P / initial_state_distrib: only toy-text envs can be enumerated")
    if np.count_nonzero(start_dist) != 1:
        raise SpecError(f"{env_id} starts in one of {np.count_nonzero(start_dist)} states; a task needs one start state")
    S, A = int(env.observation_space.n), int(env.action_space.n)  # type: ignore[attr-defined]  # Discrete, checked by P
    outcomes = {}
    for s in range(S):
        for a in range(A):
            if len(table[s][a]) != 1:
                raise SpecError(f"{env_id} is stochastic ({len(table[s][a])} outcomes of action {a} in state {s}); "
                                "pass the deterministic variant (e.g. is_slippery=False)")  # fmt: skip
            _, s2, r, done = table[s][a][0]
            outcomes[s, a] = (int(s2), float(r), bool(done))
    best = max((r for _, r, done in outcomes.values() if done), default=None)
    if best is None:
        raise SpecError(f"{env_id} never terminates: there is no success to reach")
    ncol = int(getattr(env, "ncol", 0) or (env.shape[1] if hasattr(env, "shape") else 0))

    def obs(s: int) -> dict[str, Any]:
        return {"state": s, **({"x": s % ncol, "y": s // ncol} if ncol else {})}

    nxt = np.full((S, A), -1, dtype=np.int64)
    success, failed = np.zeros((S, A), dtype=bool), np.zeros((S, A), dtype=bool)
    transitions = []
    for (s, a), (s2, r, done) in outcomes.items():
        success[s, a], failed[s, a] = done and r == best, done and r != best
        if not done:
            nxt[s, a] = s2
        transitions.append((obs(s), a, obs(s2), {"success": bool(success[s, a]), "failed": bool(failed[s, a])}))
    goals = sorted({outcomes[k][0] for k in zip(*np.nonzero(success), strict=True)})
    cells = [(g % ncol, g // ncol) for g in goals] if ncol else []
    family = env_id.split("-")[0]
    names = _GYM_ACTIONS.get(family, tuple(str(a) for a in range(A)))
    meanings = ", ".join(f"{a} = {n}" for a, n in enumerate(names)) if family in _GYM_ACTIONS else "see the env docs"
    goal = _GYM_GOALS.get(family, "reach a goal state") + f" (goal states {goals})"
    description = (
        f"Gymnasium {env_id}: {S} states, {A} actions; action meanings: {meanings}. Task: {goal}.\n"
        f"obs/next_obs: dict with state (int){' and x (column), y (row; row 0 at the top)' if ncol else ''}. "
        "info: success (bool, reached the goal: the episode ends), failed (bool, the episode ended otherwise).\n"
        f"Goal states: {goals}{f' (cells {cells})' if cells else ''}. Episodes start in state {int(np.argmax(start_dist))} "
        f"and last at most {max_episode_steps} steps; discount 0.9."
    )
    facts = {"width": ncol or S, "height": (S // ncol) if ncol else 1, "stage_targets": {0: cells}, "places": {"goal": cells}}
    return FiniteTask(f"gym/{env_id}", description, nxt, success, failed, int(np.argmax(start_dist)), tuple(transitions),
                      max_episode_steps, names, facts, goal)  # fmt: skip


def task_by_name(name: str) -> FiniteTask:
    """`office/<task>`, `grid/maze` (a 7x7 maze with a trap) or `gym/<env id>` (FrozenLake-v1
    is made with `is_slippery=False`)."""
    if name.startswith("gym/"):
        env_id = name.split("/", 1)[1]
        return gym_task_env(env_id, **({"is_slippery": False} if env_id.startswith("FrozenLake") else {}))
    if name.startswith("office/"):
        return office_task_env(name.split("/", 1)[1])
    if name == "grid/maze":
        from rewardlab.envs.gridworld import GridMDP

        walls = [(3, y) for y in range(1, 7)] + [(1, 3), (2, 3)]
        mdp = GridMDP.make(7, 7, rewards={(6, 6): 1.0, (5, 0): -1.0}, walls=walls, start=(0, 0), terminal=[(6, 6), (5, 0)])
        return grid_task_env(mdp, name="grid/maze")
    raise SpecError(f"unknown task {name!r}; use office/coffee, office/mail, office/coffee_mail, office/patrol, grid/maze or "
                    "gym/<env id> (FrozenLake-v1, CliffWalking-v1)")
