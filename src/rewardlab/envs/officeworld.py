"""The office world of the reward-machines paper, as a Gymnasium environment and as tables.

Toro Icarte, Klassen, Valenzano, McIlraith, "Reward Machines: Exploiting Reward Function
Structure in Reinforcement Learning", JAIR 2022. A 12x9 grid of twelve 3x3 rooms; cells hold
the propositions a, b, c, d (patrol landmarks), e (mail), f (coffee, two machines), g (office)
and n (decorations). The map is written out in `docs/envs.md` and /work/shared/officeworld.md.

The environment itself pays no reward and never terminates: the tasks are reward machines
(`office_task`), run beside it by `RewardMachineWrapper` or by the tabular learners in
`rewardlab.envs.tabular`, which use `office_problem` (dense tables of the same dynamics).

Compatibility: `compat=True` reproduces the original code where it differs from the paper's
description: (1) falling off the machine on a decoration from the state that owns the accepting
edge pays that edge's reward (1), and (2) the 1,000-step time limit is treated as a terminal
state by the learners (no bootstrapping). Correct semantics are the default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

try:
    import gymnasium as gym
    import numpy as np
    from gymnasium import spaces
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.envs.rm.labels import InfoLabels
from rewardlab.envs.rm.machine import RewardMachine
from rewardlab.envs.rm.text import parse_text_rm
from rewardlab.errors import InputError, SpecError

__all__ = [
    "EMPTY_CELLS",
    "HEIGHT",
    "OBJECTS",
    "OFFICE_ALPHABET",
    "OFFICE_TASKS",
    "START",
    "TASK_ORDER",
    "WIDTH",
    "OfficeWorld",
    "cell_index",
    "office_labels",
    "office_problem",
    "office_task",
    "office_transitions",
]

WIDTH, HEIGHT = 12, 9
#: action ids: up (y+1), right (x+1), down (y-1), left (x-1)
ACTIONS = ("up", "right", "down", "left")
_DELTA = ((0, 1), (1, 0), (0, -1), (-1, 0))
#: the paper's start cell (x, y); `OfficeWorld` starts every episode here by default
START = (2, 1)

OBJECTS: Mapping[tuple[int, int], str] = {
    (1, 1): "a", (1, 7): "b", (10, 7): "c", (10, 1): "d",
    (7, 4): "e",  # mail
    (8, 2): "f", (3, 6): "f",  # coffee
    (4, 4): "g",  # office
    (4, 1): "n", (7, 1): "n", (4, 7): "n", (7, 7): "n", (1, 4): "n", (10, 4): "n",  # decorations
}  # fmt: skip

#: every label set a step can emit (a cell holds at most one proposition); index = label id
OFFICE_ALPHABET: tuple[frozenset[str], ...] = (frozenset(), *(frozenset(p) for p in "abcdefgn"))

# The four tasks in the original text format (guards exclude n, so n falls off = failure).
OFFICE_TASKS: Mapping[str, str] = {
    "coffee": """0 # initial state
[2] # terminal state
(0,0,'!f&!n',ConstantRewardFunction(0))
(0,1,'f&!n',ConstantRewardFunction(0))
(1,1,'!g&!n',ConstantRewardFunction(0))
(1,2,'g&!n',ConstantRewardFunction(1))
""",
    "mail": """0 # initial state
[2] # terminal state
(0,0,'!e&!n',ConstantRewardFunction(0))
(0,1,'e&!n',ConstantRewardFunction(0))
(1,1,'!g&!n',ConstantRewardFunction(0))
(1,2,'g&!n',ConstantRewardFunction(1))
""",
    "coffee_mail": """0 # initial state
[4] # terminal state
(0,0,'!e&!f&!n',ConstantRewardFunction(0))
(0,1,'e&!f&!n',ConstantRewardFunction(0))
(0,2,'f&!e&!n',ConstantRewardFunction(0))
(1,1,'!f&!n',ConstantRewardFunction(0))
(1,3,'f&!n',ConstantRewardFunction(0))
(2,2,'!e&!n',ConstantRewardFunction(0))
(2,3,'e&!n',ConstantRewardFunction(0))
(3,3,'!g&!n',ConstantRewardFunction(0))
(3,4,'g&!n',ConstantRewardFunction(1))
""",
    "patrol": """0 # initial state
[4] # terminal state
(0,0,'!a&!n',ConstantRewardFunction(0))
(0,1,'a&!n',ConstantRewardFunction(0))
(1,1,'!b&!n',ConstantRewardFunction(0))
(1,2,'b&!n',ConstantRewardFunction(0))
(2,2,'!c&!n',ConstantRewardFunction(0))
(2,3,'c&!n',ConstantRewardFunction(0))
(3,3,'!d&!n',ConstantRewardFunction(0))
(3,4,'d&!n',ConstantRewardFunction(1))
""",
}
#: the paper's order T1..T4; multi-task training cycles through it one task per episode
TASK_ORDER = ("coffee", "mail", "coffee_mail", "patrol")


def office_task(name: str, *, compat: bool = False) -> RewardMachine:
    """The reward machine of one office task (`coffee`, `mail`, `coffee_mail`, `patrol`)."""
    if name not in OFFICE_TASKS:
        raise SpecError(f"unknown office task {name!r}; choose one of {list(OFFICE_TASKS)}")
    return parse_text_rm(OFFICE_TASKS[name], source=f"office/{name}", legacy_fall_off_reward=compat)


def _walls() -> set[tuple[int, int, int]]:
    """Forbidden (x, y, action) moves: room walls minus doorways (see the module docstring)."""
    walls: set[tuple[int, int, int]] = set()
    for x in range(WIDTH):
        for y in (0, 3, 6):
            walls |= {(x, y, 2), (x, y + 2, 0)}
    for y in range(HEIGHT):
        for x in (0, 3, 6, 9):
            walls |= {(x, y, 3), (x + 2, y, 1)}
    for y in (1, 7):  # doors between horizontally adjacent rooms
        for x in (2, 5, 8):
            walls -= {(x, y, 1), (x + 1, y, 3)}
    for x in (1, 4, 7, 10):  # middle <-> top rows
        walls -= {(x, 5, 0), (x, 6, 2)}
    for x in (1, 10):  # bottom <-> middle rows
        walls -= {(x, 2, 0), (x, 3, 2)}
    return walls


def cell_index(x: int, y: int) -> int:
    """Flat index of cell (x, y): `y * WIDTH + x`."""
    return y * WIDTH + x


def office_transitions() -> tuple[np.ndarray, np.ndarray]:
    """`(next_cell, cell_label)`: next_cell (108, 4) int, cell_label (108,) label id."""
    walls = _walls()
    nxt = np.zeros((WIDTH * HEIGHT, 4), dtype=np.int64)
    label = np.zeros(WIDTH * HEIGHT, dtype=np.int64)
    for x in range(WIDTH):
        for y in range(HEIGHT):
            for a, (dx, dy) in enumerate(_DELTA):
                nx, ny = (x, y) if (x, y, a) in walls else (x + dx, y + dy)
                nxt[cell_index(x, y), a] = cell_index(nx, ny)
            if (x, y) in OBJECTS:
                label[cell_index(x, y)] = OFFICE_ALPHABET.index(frozenset(OBJECTS[(x, y)]))
    return nxt, label


#: the label set of every cell, precomputed (the shared `OFFICE_ALPHABET` frozensets): labelling
#: a cell is one dict lookup, no frozenset is built
_CELL_LABELS: Mapping[tuple[int, int], frozenset[str]] = {
    (x, y): OFFICE_ALPHABET[OFFICE_ALPHABET.index(frozenset(OBJECTS.get((x, y), "")))]
    for x in range(WIDTH)
    for y in range(HEIGHT)
}


def _cell_labels(obs: Any, action: Any, next_obs: Any, info: Mapping[str, Any]) -> frozenset[str]:
    """The proposition of the cell `next_obs = [x, y]` (for transitions replayed without info)."""
    cell = (int(next_obs[0]), int(next_obs[1]))
    try:
        return _CELL_LABELS[cell]
    except KeyError:
        raise InputError(f"office world observation {list(cell)} is off the {WIDTH}x{HEIGHT} grid") from None


#: Labelling function for `RewardMachineWrapper`: the proposition of the cell entered. It reads
#: `info["labels"]`, which `OfficeWorld.step` fills (the wrapper reads that key inline, see
#: `InfoLabels`), and labels the cell of `next_obs` when the info has no labels.
office_labels = InfoLabels("labels", fallback=_cell_labels)


#: flat indices (`cell_index`) of the cells with no proposition: where
#: `OfficeWorld(start="random")` may start an episode
EMPTY_CELLS = np.array([cell_index(x, y) for x in range(WIDTH) for y in range(HEIGHT) if (x, y) not in OBJECTS])


class OfficeWorld(gym.Env[np.ndarray, int]):
    """The office-world grid. Observation: `[x, y]`; actions: up, right, down, left.

    Reward is always 0 and the episode never terminates by itself: pair it with a task's
    reward machine (`RewardMachineWrapper(env, office_task("coffee"), office_labels)`).
    `info["labels"]` holds the proposition of the cell entered. Truncates after
    `max_episode_steps` steps (1,000 in the paper).

    `start="random"` starts each episode in a cell drawn from `np_random` among the cells with
    no proposition (exploring starts, Sutton & Barto 2018, sec. 5.3): the paper always starts
    at (2, 1), from where uniformly random actions finish `coffee` within 50 steps in 0.0073% of
    episodes (0.72% from a random empty cell; exact, `tests/envs/test_sb3.py`) before a
    decoration ends them, too rarely for a deep agent's epsilon-greedy exploration (the paper's
    tabular learners explore by optimistic initial values instead). Evaluate from (2, 1).
    """

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012 (gymnasium declares it an instance attribute)

    def __init__(self, max_episode_steps: int = 1000, render_mode: str | None = None, *, start: str = "paper"):
        if start not in ("paper", "random"):
            raise SpecError(f"start must be 'paper' (always (2, 1)) or 'random', got {start!r}")
        self.start = start
        self.observation_space = spaces.Box(0, np.array([WIDTH - 1, HEIGHT - 1]), shape=(2,), dtype=np.int64)
        self.action_space = spaces.Discrete(4)  # type: ignore[assignment]
        self.max_episode_steps = max_episode_steps
        self.render_mode = render_mode
        self._next, self._label = office_transitions()
        self._cell = cell_index(*START)
        self._t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self._cell % WIDTH, self._cell // WIDTH], dtype=np.int64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._cell, self._t = cell_index(*START), 0
        if self.start == "random":
            self._cell = int(self.np_random.choice(EMPTY_CELLS))
        return self._obs(), {"labels": OFFICE_ALPHABET[self._label[self._cell]]}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self._cell = int(self._next[self._cell, int(action)])
        self._t += 1
        info = {"labels": OFFICE_ALPHABET[self._label[self._cell]]}
        return self._obs(), 0.0, False, self._t >= self.max_episode_steps, info

    def render(self) -> str:
        rows = []
        for y in range(HEIGHT - 1, -1, -1):
            rows.append("".join("A" if cell_index(x, y) == self._cell else OBJECTS.get((x, y), ".") for x in range(WIDTH)))
        return "\n".join(rows)


def office_problem(tasks: Sequence[str] = ("coffee_mail",), *, compat: bool = False) -> Any:
    """Dense product tables of the office world and `tasks` for `rewardlab.envs.tabular`.

    Args:
        tasks: task names; several means multi-task training cycling one task per episode.
        compat: the original code's behaviour (see the module docstring).
    """
    from rewardlab.envs.tabular import TabularProblem

    nxt, label = office_transitions()
    rms = [office_task(t, compat=compat) for t in tasks]
    return TabularProblem.build(
        next_obs=nxt,
        obs_label=label,
        alphabet=OFFICE_ALPHABET,
        start=cell_index(*START),
        machines=rms,
        truncation_is_terminal=compat,
        names=tuple(tasks),
    )
