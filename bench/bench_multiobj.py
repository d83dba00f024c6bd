"""Pareto tools on GRPO-sized groups: rewardlab.multiobj vs pymoo, on the same arrays, in one run.

pymoo is what a user reaches for to sort reward vectors into fronts, compute NSGA-II crowding
and a hypervolume. It has no notion of groups, so its side is the loop a user writes over the
groups (a batch's prompts), with every objective negated (pymoo minimises; rewardlab maximises).
Both sides sort with moocore's C `pareto_rank` and compute the hypervolume with moocore's
`hypervolume` (pymoo 0.6.2 calls moocore too), so the ratios measure what each library does
around those calls: checks, masks, the per-group loop, the crowding arithmetic.

Workload (defaults): 1,000 groups x 16 samples x 3 objectives (a GRPO batch of reward
vectors), and one large set of 10,000 x 3 points. Values are continuous uniform draws, so no two
vectors tie and both sides must agree exactly (ties would leave the order of equal values, and
so a crowding distance, to each sort). Timed, each checked for agreement before its time is
reported:

* per-group front ranks: `pareto_ranks` per group vs `NonDominatedSorting().do(..., return_rank=True)`;
* per-group Pareto selection (Parrot's rule): `pareto_select` vs the first front per group;
* per-group crowding (sorting included): `crowding_distance` vs fronts + `calc_crowding_distance`
  per front (pymoo divides by the number of objectives; compared after scaling);
* per-group hypervolume: `group_hypervolumes` vs `HV(ref_point=...)` per group;
* the large set: front ranks, crowding and hypervolume of 10,000 x 3 points.

Times are the best of `--repeats` calls after a warm-up, as CPU time of this process
(`time.process_time`: the machine may be shared, and CPU time is what load inflates least).
Both sides are timed in `--rounds` alternating rounds (the order flips each round); the round
with the median ratio is printed, with the ratio's range over rounds. Run:

    .venv/bin/python bench/bench_multiobj.py                              # full size
    .venv/bin/python bench/bench_multiobj.py --groups 20 --points 500     # smoke run
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from pymoo.indicators.hv import HV
from pymoo.operators.survival.rank_and_crowding.metrics import calc_crowding_distance
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

from rewardlab.multiobj import crowding_distance, hypervolume, pareto_ranks, pareto_select
from rewardlab.multiobj.pareto import group_hypervolumes


def cpu_best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best CPU time of `repeats` calls after a warm-up call, and the last call's result."""
    out = fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


# -- the pymoo side: a loop over groups, objectives negated --------------------------------------
def pymoo_ranks(groups: np.ndarray) -> np.ndarray:
    nds = NonDominatedSorting()
    return np.stack([nds.do(-g, return_rank=True)[1] for g in groups])


def pymoo_select(groups: np.ndarray) -> np.ndarray:
    nds = NonDominatedSorting()
    out = np.zeros(groups.shape[:2], dtype=bool)
    for i, g in enumerate(groups):
        out[i, nds.do(-g, only_non_dominated_front=True)] = True
    return out


def pymoo_crowding_one(points: np.ndarray) -> np.ndarray:
    out = np.zeros(points.shape[0])
    for front in NonDominatedSorting().do(-points):
        out[front] = calc_crowding_distance(-points[front])
    return out


def pymoo_crowding(groups: np.ndarray) -> np.ndarray:
    return np.stack([pymoo_crowding_one(g) for g in groups])


def pymoo_hypervolumes(groups: np.ndarray, ref: np.ndarray) -> np.ndarray:
    indicator = HV(ref_point=-ref)
    return np.array([indicator(-g) for g in groups])


# -- the rewardlab side ------------------------------------------------------------------------
def rewardlab_ranks(groups: np.ndarray) -> np.ndarray:
    return np.stack([pareto_ranks(g) for g in groups])


def rewardlab_hypervolumes(groups: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return group_hypervolumes(groups, ref)


def alone(ranks: np.ndarray) -> np.ndarray:
    """Where a point is the only member of its front (per group along the last axis)."""
    out = np.zeros(ranks.shape, dtype=bool)
    for idx in np.ndindex(ranks.shape[:-1]):
        row = ranks[idx]
        out[idx] = np.bincount(row)[row] == 1
    return out


def same_crowding(ours: np.ndarray, theirs: np.ndarray, objectives: int, single: np.ndarray) -> bool:
    """rewardlab sums the normalised gaps (Deb et al. 2002); pymoo also divides by the
    objectives. The one convention apart: a point alone in its front is a boundary point, `inf`
    in rewardlab, and 0 in pymoo (its span is 0, so every gap is dropped)."""
    if not ((np.isinf(ours[single])).all() and (theirs[single] == 0).all()):
        return False
    ours, theirs = ours[~single], theirs[~single]
    inf = np.isinf(ours)
    return bool((inf == np.isinf(theirs)).all() and np.allclose(ours[~inf], objectives * theirs[~inf]))


def cases(batch: np.ndarray, points: np.ndarray, ref: np.ndarray) -> list[tuple[str, Callable[[], Any], Callable[[], Any], Callable[[Any, Any], bool]]]:
    k = batch.shape[2]
    exact = lambda a, b: bool(np.array_equal(a, b))  # noqa: E731
    close = lambda a, b: bool(np.allclose(a, b, rtol=1e-12))  # noqa: E731
    single_batch, single_points = alone(pymoo_ranks(batch)), alone(pareto_ranks(points)[None])[0]
    crowd = lambda a, b: same_crowding(np.asarray(a), np.asarray(b), k, single_batch)  # noqa: E731
    crowd_points = lambda a, b: same_crowding(np.asarray(a), np.asarray(b), k, single_points)  # noqa: E731
    g, s = batch.shape[:2]
    where = f"{g:,} groups x {s} x {k}"
    big = f"{points.shape[0]:,} x {points.shape[1]} set"
    return [
        (f"front ranks, {where}", lambda: rewardlab_ranks(batch), lambda: pymoo_ranks(batch), exact),
        (f"Pareto selection, {where}", lambda: pareto_select(batch), lambda: pymoo_select(batch), exact),
        (f"crowding, {where}", lambda: crowding_distance(batch), lambda: pymoo_crowding(batch), crowd),
        (f"hypervolume per group, {where}", lambda: rewardlab_hypervolumes(batch, ref),
         lambda: pymoo_hypervolumes(batch, ref), close),
        (f"front ranks, {big}", lambda: pareto_ranks(points), lambda: NonDominatedSorting().do(-points, return_rank=True)[1], exact),
        (f"crowding, {big}", lambda: crowding_distance(points[None])[0], lambda: pymoo_crowding_one(points), crowd_points),
        (f"hypervolume, {big}", lambda: hypervolume(points, ref), lambda: HV(ref_point=-ref)(-points), close),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=16, help="samples per group")
    parser.add_argument("--objectives", type=int, default=3)
    parser.add_argument("--points", type=int, default=10_000, help="points of the large set")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    batch = rng.random((args.groups, args.samples, args.objectives))
    points = rng.random((args.points, args.objectives))
    ref = np.zeros(args.objectives)
    print(f"CPU seconds, best of {args.repeats} per round; the median of {args.rounds} alternating rounds")
    print(f"{'workload':<44} {'rewardlab':>10} {'pymoo':>10} {'pymoo/rewardlab':>16}  range")
    for name, ours, theirs, agree in cases(batch, points, ref):
        if not agree(ours(), theirs()):
            raise SystemExit(f"{name}: rewardlab and pymoo disagree")
        rounds = []
        for r in range(args.rounds):
            first, second = (ours, theirs) if r % 2 == 0 else (theirs, ours)
            t_first = cpu_best(first, args.repeats)[0]
            t_second = cpu_best(second, args.repeats)[0]
            t_ours, t_theirs = (t_first, t_second) if r % 2 == 0 else (t_second, t_first)
            rounds.append((t_theirs / max(t_ours, 1e-9), t_ours, t_theirs))
        ratios = [x[0] for x in rounds]
        ratio, t_ours, t_theirs = min(rounds, key=lambda x: abs(x[0] - statistics.median(ratios)))
        print(f"{name:<44} {t_ours:>10.4f} {t_theirs:>10.4f} {ratio:>15.2f}x  {min(ratios):.2f}-{max(ratios):.2f}")


if __name__ == "__main__":
    main()
