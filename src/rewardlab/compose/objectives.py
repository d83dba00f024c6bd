"""Objectives: a reward vector a spec declares, returned beside the scalar total.

    [[reward.objectives]]
    name = "correct"
    expr = "correct"          # a component name, or a formula over component names
    weight = 1.0              # its default weight when combine = "objectives"

Per sample, an objective is evaluated over the component values the way a `formula` total is:
an ok component is its score, an error under `on_error = "zero"` is 0, a component a gate turned
off is 0 (a sample that failed the format has no correctness). A component that was skipped, or
an error under `on_error = "skip"`, leaves every objective that uses it uncomputed: `None` in
`RewardResult.objectives`, with the reason in `info["objectives_missing"]`. A formula that fails
at run time (a log of 0) leaves its objective uncomputed too, never a quiet 0. A total that
fails under `on_error = "fail"` is an error result and carries no vector.

Weight-conditioned totals (`combine = "objectives"`): the total is the linear scalarisation
`Σ_k w_k · o_k`, with the weights of the sample's `meta["objective_weights"]` (a mapping that
names every objective, or a list in declaration order) when it has them, else the declared
weights. A server request can set them for every sample of the request; a TRL dataset column
`objective_weights` reaches `meta` like any other column. Training a weight-conditioned policy
(one policy for every trade-off, as in MAH-DPO or conditioned MORL) means drawing `w` per
prompt, showing it to the policy in the prompt, and scoring with the same `w`; the weights used
are recorded in `info["objective_weights"]`, so every total can be re-derived from its vector.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rewardlab.compose.formula import Formula, FormulaError
from rewardlab.core import JSON
from rewardlab.errors import SpecError, SpecProblem

__all__ = ["WEIGHTS_KEY", "Objective", "objective_values", "sample_weights"]

#: The `Sample.meta` key (a dataset column, a request field) holding a sample's objective weights.
WEIGHTS_KEY = "objective_weights"


@dataclass(frozen=True)
class Objective:
    """One named entry of a reward vector: a formula over component names (often just one name)."""

    name: str
    expr: str
    weight: float = 1.0
    formula: Formula = field(init=False, repr=False, compare=False)

    def bind(self, components: set[str] | frozenset[str]) -> Objective:
        """This objective with its formula compiled against `components` (SpecError if it does not)."""
        try:
            compiled = Formula(self.expr, names=components)
        except FormulaError as exc:
            raise SpecError([SpecProblem(f"objectives.{self.name}.expr", str(exc))]) from exc
        bound = Objective(self.name, self.expr, self.weight)
        object.__setattr__(bound, "formula", compiled)
        return bound

    def describe(self) -> dict[str, JSON]:
        return {"name": self.name, "expr": self.expr, "weight": self.weight}


def check_objectives(objectives: Sequence[Objective], components: set[str] | frozenset[str]) -> tuple[Objective, ...]:
    """`objectives` bound to the component names; SpecError lists every problem."""
    problems: list[SpecProblem] = []
    names = [o.name for o in objectives]
    bound: list[Objective] = []
    for o in objectives:
        if names.count(o.name) > 1:
            problems.append(SpecProblem(f"objectives.{o.name}", f"duplicate objective name {o.name!r}"))
        if not math.isfinite(o.weight):
            problems.append(SpecProblem(f"objectives.{o.name}.weight", f"must be a finite number, got {o.weight}"))
        try:
            bound.append(o.bind(components))
        except SpecError as exc:
            problems.extend(exc.problems)
    if problems:
        raise SpecError(problems)
    return tuple(bound)


def objective_values(
    objectives: Sequence[Objective], env: Mapping[str, float], missing: Mapping[str, str]
) -> tuple[dict[str, float | None], dict[str, str]]:
    """Each objective's value over `env` (component name -> value), and why each None is None.

    Args:
        objectives: bound objectives (`Objective.bind`).
        env: the value of every component that counts (gated-off ones as 0).
        missing: component name -> why it has no value (skipped, error under `skip`).
    """
    values: dict[str, float | None] = {}
    reasons: dict[str, str] = {}
    for o in objectives:
        absent = [n for n in o.formula.used if n in missing]
        if absent:
            values[o.name] = None
            reasons[o.name] = "; ".join(f"{n}: {missing[n]}" for n in sorted(absent))
            continue
        try:
            values[o.name] = o.formula(env)
        except FormulaError as exc:
            values[o.name] = None
            reasons[o.name] = f"formula: {exc}"
    return values, reasons


def sample_weights(objectives: Sequence[Objective], given: object) -> tuple[float, ...] | str:
    """The weights for one sample: `given` (a sample's `meta["objective_weights"]`) checked
    against the objectives, or the declared weights when `given` is None; a message saying
    what is wrong otherwise (it becomes an `invalid_input` result naming the sample's field)."""
    names = [o.name for o in objectives]
    if given is None:
        return tuple(o.weight for o in objectives)
    if isinstance(given, Mapping):
        unknown = sorted(str(k) for k in given if k not in names)
        absent = [n for n in names if n not in given]
        if unknown or absent:
            return (
                f"{WEIGHTS_KEY} must name every objective ({', '.join(names)}); "
                + (f"unknown: {', '.join(unknown)}" if unknown else f"missing: {', '.join(absent)}")
            )
        raw: list[object] = [given[n] for n in names]
    elif isinstance(given, list | tuple):
        if len(given) != len(names):
            return f"{WEIGHTS_KEY} has {len(given)} weights for {len(names)} objectives ({', '.join(names)})"
        raw = list(given)
    else:
        return f"{WEIGHTS_KEY} must be an object naming each objective or a list, got {type(given).__name__}"
    out: list[float] = []
    for name, value in zip(names, raw, strict=True):
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return f"{WEIGHTS_KEY}[{name!r}] must be a finite number, got {value!r}"
        out.append(float(value))
    return tuple(out)
