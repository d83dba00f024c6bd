"""Every search method on the step simulator, paired on common random numbers (`rewardlab select simulate`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rewardlab.evaluate.stats import Interval, bootstrap_ci
from rewardlab.select.adaptive import adaptive_vote, fit_calibrator, rejection_threshold
from rewardlab.select.generate import Problem
from rewardlab.select.mcts import mcts_search
from rewardlab.select.options import SimulationOptions, SimulatorConfig
from rewardlab.select.search import (
    beam_search,
    best_first_search,
    best_of_n_search,
    diverse_tree_search,
    early_rejection_search,
    rollouts,
)
from rewardlab.select.simulator import StepSimulator, judge

__all__ = ["MethodRow", "compare_methods"]


@dataclass(frozen=True)
class MethodRow:
    """One method's accuracy (bootstrap CI over problems), mean tokens and mean samples per problem."""

    method: str
    accuracy: Interval
    tokens: float
    samples: float | None


def _majority(sim: StepSimulator, problem: Problem, n: int) -> tuple[str | None, int]:
    finished, meter = rollouts(sim, sim.prm, problem, n)
    return Counter(node.answer for node in finished).most_common(1)[0][0], meter.tokens


def compare_methods(config: SimulatorConfig | None = None, options: SimulationOptions | None = None) -> list[MethodRow]:
    """Run best-of-n, majority, beam, DVTS, MCTS, best-first, early rejection and the adaptive vote on the same
    simulated problems; each method gets a fresh simulator with the same seed (common random
    numbers). The early-rejection PRM is calibrated on 100 other problems, its threshold chosen on
    100 more for a 1-point loss bound (`rejection_threshold`); MCTS rolls out (PUCT, PRM priors)."""
    cfg = config or SimulatorConfig()
    o = options or SimulationOptions()
    budget, width, expand, seed = o.budget, o.width, o.expand, o.seed
    sim = StepSimulator(cfg, seed=seed)
    tasks = sim.problems(o.problems, seed=seed + 1)
    calibrator = fit_calibrator(sim, sim.prm, sim.problems(100, seed=seed + 2), judge, n=8, aggregate="product")
    threshold = rejection_threshold(sim, sim.prm, sim.problems(100, seed=seed + 3), judge, calibrator, n=budget,
                                    max_loss=0.01, aggregate="product")  # fmt: skip
    methods: dict[str, Callable[[StepSimulator, Problem], tuple[str | None, int, int | None]]] = {
        f"best-of-{budget}": lambda s, p: _triple(best_of_n_search(s, s.prm, p, budget)),
        f"majority@{budget}": lambda s, p: (*_majority(s, p, budget), budget),
        f"beam {width}x{expand}": lambda s, p: _triple(beam_search(s, s.prm, p, width=width, expand=expand)),
        f"dvts {width}x{expand}": lambda s, p: _triple(diverse_tree_search(s, s.prm, p, trees=width, expand=expand)),
        f"mcts {budget}x3": lambda s, p: _triple(mcts_search(s, s.prm, p, simulations=budget, expand=3)),
        "best-first": lambda s, p: _triple(best_first_search(s, s.prm, p, expand=2, max_tokens=budget * 300)),
        f"early rejection@{budget}": lambda s, p: _triple(early_rejection_search(s, s.prm, p, budget, calibrator,
                                                                                  threshold=threshold, aggregate="product")),
        f"adaptive vote<={budget}": lambda s, p: _adaptive(adaptive_vote(s, s.prm, p, max_n=budget)),
    }  # fmt: skip
    rows = []
    for name, method in methods.items():
        fresh = StepSimulator(cfg, seed=seed)
        out = [method(fresh, p) for p in tasks]
        correct = np.array([judge(p, answer) for p, (answer, _, _) in zip(tasks, out, strict=True)], dtype=float)
        samples = [k for _, _, k in out]
        rows.append(MethodRow(name, bootstrap_ci(correct, seed=seed), float(np.mean([t for _, t, _ in out])),
                              None if any(k is None for k in samples) else float(np.mean(samples))))  # type: ignore[arg-type]
    return rows


def _triple(result: object) -> tuple[str | None, int, int | None]:
    return result.answer, result.tokens, None  # type: ignore[attr-defined]


def _adaptive(result: object) -> tuple[str | None, int, int | None]:
    return result.answer, result.tokens, result.samples  # type: ignore[attr-defined]
