"""Multi-objective rewards: reward vectors as arrays, Pareto tools on groups, late weights.

    from rewardlab.multiobj import objective_arrays, pareto_select, pareto_advantages

    arrays = objective_arrays(results, group_size=8)        # (groups, samples, objectives)
    keep = pareto_select(arrays.values, arrays.mask)        # Parrot: the non-dominated samples
    adv = pareto_advantages(arrays.values, arrays.mask).advantages

A spec declares the vector (`[[reward.objectives]]`, see `rewardlab.compose.objectives`);
this package works on the vectors: per-objective normalisation (`shape`'s z/rank/min-max, or a
running one), non-dominated sorting, crowding, Pareto selection and advantages, hypervolume
(moocore, the `multiobj` extra), and scalarisation with weights chosen per sample. See
docs/multiobjective.md.
"""

from rewardlab.multiobj.pareto import (
    ParetoAdvantages,
    crowding_distance,
    hypervolume,
    pareto_advantages,
    pareto_ranks,
    pareto_select,
)
from rewardlab.multiobj.scalarize import scalarize, simplex_weights
from rewardlab.multiobj.vectors import (
    ObjectiveArrays,
    RunningNormalizer,
    normalize_objectives,
    objective_arrays,
)

__all__ = [
    "ObjectiveArrays",
    "ParetoAdvantages",
    "RunningNormalizer",
    "crowding_distance",
    "hypervolume",
    "normalize_objectives",
    "objective_arrays",
    "pareto_advantages",
    "pareto_ranks",
    "pareto_select",
    "scalarize",
    "simplex_weights",
]
